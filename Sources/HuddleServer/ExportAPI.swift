import HuddleCore
import HuddleIO
import HuddleStore
import HuddleWebSocket
import Logging

/// The export archive's endpoint on one I/O loop (protocol.md, "Export"): `GET /api/v1/export`
/// with the user's session token (`Authorization: Bearer`, as for photos) answers with a tar of
/// `export.json` and every photo the user holds, streamed (`ExportTransfer`).
///
/// What can be judged from the head is judged here: the method, the token's presence, and a
/// slot under `--max-concurrent-exports` (taken before the core is asked, so the core's work for
/// exports is bounded by the slots too). Confined to its loop, like the endpoint it forwards through.
final class ExportAPI {
    static let path = "/api/v1/export"
    /// What a refusal at the cap asks the client to wait: an export takes seconds.
    static let busyRetryAfterSeconds = 5

    let photos: PhotoAPI
    let gate: ExportGate
    let idleTimeoutMilliseconds: Int64

    init(photos: PhotoAPI, gate: ExportGate, idleTimeoutMilliseconds: Int) {
        self.photos = photos
        self.gate = gate
        self.idleTimeoutMilliseconds = Int64(idleTimeoutMilliseconds)
    }

    var loop: EventLoop { photos.loop }
    var store: PhotoStore { photos.store }
    var workers: WorkerThreads { photos.workers }
    var logger: Logger { photos.logger }

    enum Start {
        /// Answered from the head alone.
        case respond(PhotoResponse)
        /// Under way: it answers, then streams, when the core has decided.
        case transfer(ExportTransfer)
    }

    func begin(_ head: HTTPRequestHead, on connection: Connection) -> Start {
        guard head.method == "GET" else { return .respond(.error(405, "method_not_allowed", "use GET", headers: [("Allow", "GET")])) }
        guard let token = PhotoAPI.bearerToken(head) else { return .respond(.unauthenticated) }
        guard gate.acquire() else {
            let seconds = Self.busyRetryAfterSeconds
            return .respond(.error(
                429, "too_many_exports", "at most \(gate.maxConcurrent) exports at once on this server",
                headers: [("Retry-After", String(seconds))], retryAfterMilliseconds: seconds * 1000))
        }
        let transfer = ExportTransfer(tokenHash: SessionToken.hash(token), connection: connection, api: self)
        transfer.authorize()
        return .transfer(transfer)
    }

    /// The core's refusal as the response: `exports_limited` is 429 with the wait; a bad token
    /// is 401, as for photos.
    func refusal(_ error: CoreError) -> PhotoResponse {
        guard error.code == .exportsLimited else { return .refused(error) }
        gate.countRefusal(.rateLimited)
        let milliseconds = Int(error.retryAfterMilliseconds ?? 1000)
        return .error(
            429, error.code.rawValue, error.message, headers: [("Retry-After", String((milliseconds + 999) / 1000))],
            retryAfterMilliseconds: milliseconds)
    }
}
