import Synchronization

/// The export archives in flight on the whole server, shared by every I/O loop: at most
/// `maxConcurrent` (`--max-concurrent-exports`), each holding a connection, an open photo file
/// and up to `ExportTransfer.queueWindow` bytes queued. Also what `/metrics` says about exports
/// (protocol.md, "Export").
final class ExportGate: Sendable {
    /// Why an export was refused or ended early, as its metric label.
    enum Refusal: String, Sendable, CaseIterable {
        /// `--max-concurrent-exports` are in flight (429 `too_many_exports`).
        case serverBusy = "server_busy"
        /// The user took one within `--export-interval` (429 `exports_limited`).
        case rateLimited = "rate_limited"
    }

    enum Failure: String, Sendable, CaseIterable {
        /// The reader took nothing for the idle timeout with bytes waiting.
        case readerStalled = "reader_stalled"
        /// The connection closed before the archive's end.
        case disconnected
        /// A listed photo was gone or changed on disk, or could not be read: the response ends
        /// short of its Content-Length.
        case photoUnreadable = "photo_unreadable"
    }

    private struct State {
        var inFlight = 0
        var started = 0
        var completed = 0
        var refused: [Refusal: Int] = [:]
        var failed: [Failure: Int] = [:]
    }

    let maxConcurrent: Int
    private let state = Mutex(State())
    /// Archive bytes written to sockets.
    let bytesSent = Atomic<Int>(0)
    /// The most bytes one export has had in its connection's queue (the per-export memory bound).
    let peakQueuedBytes = Atomic<Int>(0)
    /// Exports whose queue is full: they read nothing more until their reader takes some.
    let waitingForReader = Atomic<Int>(0)

    init(maxConcurrent: Int) {
        self.maxConcurrent = maxConcurrent
    }

    /// Takes a slot for one export (before its token is checked: the core's work for it is
    /// bounded by the slots too); false at the cap. Give it back with `release`.
    func acquire() -> Bool {
        state.withLock { state in
            guard state.inFlight < maxConcurrent else {
                state.refused[.serverBusy, default: 0] += 1
                return false
            }
            state.inFlight += 1
            return true
        }
    }

    func release() {
        state.withLock { $0.inFlight -= 1 }
    }

    func countRefusal(_ refusal: Refusal) {
        state.withLock { $0.refused[refusal, default: 0] += 1 }
    }

    func countStarted() {
        state.withLock { $0.started += 1 }
    }

    func countCompleted() {
        state.withLock { $0.completed += 1 }
    }

    func countFailure(_ failure: Failure) {
        state.withLock { $0.failed[failure, default: 0] += 1 }
    }

    func observeQueued(_ bytes: Int) {
        _ = peakQueuedBytes.max(bytes, ordering: .relaxed)
    }

    func prometheusText() -> String {
        let state = state.withLock { $0 }
        var text = "# HELP huddle_exports_in_flight Export archives being made or sent (--max-concurrent-exports).\n"
        text += "# TYPE huddle_exports_in_flight gauge\nhuddle_exports_in_flight \(state.inFlight)\n"
        text += "# HELP huddle_exports_started_total Export archives whose response began.\n"
        text += "# TYPE huddle_exports_started_total counter\nhuddle_exports_started_total \(state.started)\n"
        text += "# HELP huddle_exports_completed_total Export archives sent to their last byte.\n"
        text += "# TYPE huddle_exports_completed_total counter\nhuddle_exports_completed_total \(state.completed)\n"
        text += "# HELP huddle_exports_refused_total Export requests refused with 429, by reason.\n"
        text += "# TYPE huddle_exports_refused_total counter\n"
        for refusal in Refusal.allCases {
            text += "huddle_exports_refused_total{reason=\"\(refusal.rawValue)\"} \(state.refused[refusal] ?? 0)\n"
        }
        text += "# HELP huddle_exports_failed_total Export archives that ended before their last byte, by reason.\n"
        text += "# TYPE huddle_exports_failed_total counter\n"
        for failure in Failure.allCases {
            text += "huddle_exports_failed_total{reason=\"\(failure.rawValue)\"} \(state.failed[failure] ?? 0)\n"
        }
        text += "# HELP huddle_export_bytes_sent_total Export archive bytes written to sockets.\n"
        text += "# TYPE huddle_export_bytes_sent_total counter\nhuddle_export_bytes_sent_total \(bytesSent.load(ordering: .relaxed))\n"
        text += "# HELP huddle_export_queued_bytes_peak The most bytes one export has held in its connection's queue.\n"
        text += "# TYPE huddle_export_queued_bytes_peak gauge\nhuddle_export_queued_bytes_peak \(peakQueuedBytes.load(ordering: .relaxed))\n"
        text += "# HELP huddle_exports_waiting_for_reader Exports with a full queue, reading no more until their reader takes bytes.\n"
        text += "# TYPE huddle_exports_waiting_for_reader gauge\nhuddle_exports_waiting_for_reader \(waitingForReader.load(ordering: .relaxed))\n"
        return text
    }
}
