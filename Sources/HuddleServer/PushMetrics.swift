import Synchronization

/// The push gateway's counters for `GET /metrics` (protocol.md, "HTTP API"). Written by the
/// gateway's thread only, read by scrapes.
final class PushMetrics: Sendable {
    /// Why a notification was given up.
    enum DropReason: String, CaseIterable {
        /// The queue was full and this was the oldest waiting.
        case queueFull = "queue_full"
        /// Every attempt failed (connection errors, timeouts, 5xx, 429).
        case retriesExhausted = "retries_exhausted"
        /// The webhook answered a status that a retry would not change (4xx but 408 and 429, 3xx).
        case rejected
    }

    /// Notifications the webhook accepted (2xx).
    let sent = Atomic<Int>(0)
    /// Attempts that failed, each retry counted.
    let failed = Atomic<Int>(0)
    private let droppedQueueFull = Atomic<Int>(0)
    private let droppedRetriesExhausted = Atomic<Int>(0)
    private let droppedRejected = Atomic<Int>(0)
    /// Notifications waiting, new or retrying (not those being sent).
    let queueDepth = Atomic<Int>(0)
    /// Webhook requests started and not finished.
    let inFlight = Atomic<Int>(0)

    init() {}

    func countDrop(_ reason: DropReason) {
        switch reason {
        case .queueFull: droppedQueueFull.add(1, ordering: .relaxed)
        case .retriesExhausted: droppedRetriesExhausted.add(1, ordering: .relaxed)
        case .rejected: droppedRejected.add(1, ordering: .relaxed)
        }
    }

    func dropped(_ reason: DropReason) -> Int {
        switch reason {
        case .queueFull: droppedQueueFull.load(ordering: .relaxed)
        case .retriesExhausted: droppedRetriesExhausted.load(ordering: .relaxed)
        case .rejected: droppedRejected.load(ordering: .relaxed)
        }
    }

    func prometheusText() -> String {
        var text = "# HELP huddle_push_sent_total Push notifications the webhook accepted.\n# TYPE huddle_push_sent_total counter\n"
        text += "huddle_push_sent_total \(sent.load(ordering: .relaxed))\n"
        text += "# HELP huddle_push_failed_total Push webhook attempts that failed (each retry counts).\n"
        text += "# TYPE huddle_push_failed_total counter\n"
        text += "huddle_push_failed_total \(failed.load(ordering: .relaxed))\n"
        text += "# HELP huddle_push_dropped_total Push notifications given up, by reason.\n# TYPE huddle_push_dropped_total counter\n"
        for reason in DropReason.allCases {
            text += "huddle_push_dropped_total{reason=\"\(reason.rawValue)\"} \(dropped(reason))\n"
        }
        text += "# HELP huddle_push_queue_depth Push notifications waiting to be sent or retried.\n# TYPE huddle_push_queue_depth gauge\n"
        text += "huddle_push_queue_depth \(queueDepth.load(ordering: .relaxed))\n"
        text += "# HELP huddle_push_in_flight Push webhook requests under way.\n# TYPE huddle_push_in_flight gauge\n"
        text += "huddle_push_in_flight \(inFlight.load(ordering: .relaxed))\n"
        return text
    }
}
