import HuddleCore
import Synchronization

/// The photo uploads in flight on the whole server, shared by every I/O loop: a slot per
/// upload, at most `maxUploads` in all and `maxUploadsPerUser` per user, so neither one user
/// nor a crowd can hold unbounded temporary files, connections and workers. Also what
/// `/metrics` says about uploads.
final class PhotoUploads: Sendable {
    /// Why a slot was refused, as its metric label.
    enum Refusal: String, Sendable {
        case serverBusy = "server_busy"
        case userBusy = "user_busy"
    }

    private struct State {
        var total = 0
        var byUser: [Username: Int] = [:]
        var refusals: [String: Int] = [:]
    }

    let maxUploads: Int
    let maxUploadsPerUser: Int
    private let state = Mutex(State())
    /// Body bytes of the uploads in flight, written to their temporary files (none in memory).
    let spooledBytes = Atomic<Int>(0)

    init(maxUploads: Int, maxUploadsPerUser: Int) {
        self.maxUploads = maxUploads
        self.maxUploadsPerUser = maxUploadsPerUser
    }

    /// Takes a slot for an upload by `user`, or says why not. Give it back with `release`.
    func acquire(for user: Username) -> Refusal? {
        state.withLock { state in
            let refusal: Refusal? =
                if state.total >= maxUploads { .serverBusy }
                else if state.byUser[user, default: 0] >= maxUploadsPerUser { .userBusy }
                else { nil }
            if let refusal {
                state.refusals[refusal.rawValue, default: 0] += 1
                return refusal
            }
            state.total += 1
            state.byUser[user, default: 0] += 1
            return nil
        }
    }

    func release(for user: Username) {
        state.withLock { state in
            state.total -= 1
            let left = state.byUser[user, default: 1] - 1
            state.byUser[user] = left > 0 ? left : nil
        }
    }

    /// An upload refused for another reason than a slot (`quota`, `timeout`), for the metric.
    func countRefusal(_ reason: String) {
        state.withLock { $0.refusals[reason, default: 0] += 1 }
    }

    /// Uploads refused, by reason.
    func refusalCounts() -> [String: Int] {
        state.withLock { $0.refusals }
    }

    func prometheusText() -> String {
        let (total, refusals) = state.withLock { ($0.total, $0.refusals) }
        var text = "# HELP huddle_photo_uploads_in_flight Photo uploads holding a slot (--max-uploads, --max-uploads-per-user).\n"
        text += "# TYPE huddle_photo_uploads_in_flight gauge\nhuddle_photo_uploads_in_flight \(total)\n"
        text += "# HELP huddle_photo_upload_bytes_spooled Body bytes of uploads in flight, in temporary files on disk.\n"
        text += "# TYPE huddle_photo_upload_bytes_spooled gauge\nhuddle_photo_upload_bytes_spooled \(spooledBytes.load(ordering: .relaxed))\n"
        text += "# HELP huddle_photo_upload_refusals_total Photo uploads refused for a bound, by reason.\n"
        text += "# TYPE huddle_photo_upload_refusals_total counter\n"
        for reason in ["server_busy", "user_busy", "quota", "timeout"] {
            text += "huddle_photo_upload_refusals_total{reason=\"\(reason)\"} \(refusals[reason] ?? 0)\n"
        }
        return text
    }
}
