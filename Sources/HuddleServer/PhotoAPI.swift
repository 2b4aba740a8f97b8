import HuddleCore
import HuddleIO
import HuddleStore
import HuddleWebSocket
import Logging

/// The photo endpoints on one I/O loop (protocol.md, "HTTP API", "Photos"):
/// `PUT /api/v1/photos` stores a photo, `GET /api/v1/photos/<hash>` reads one. Callers are the
/// app's users, authenticated with their session token (`Authorization: Bearer`) — not the API
/// key — so the endpoints are on whether or not the HTTP API is.
///
/// Everything that can be judged from the head is judged here, before any of the body is read:
/// the method, the token's presence, the body's framing and declared size. The rest is a
/// `PhotoTransfer`. Confined to its loop, like the endpoint it forwards through.
final class PhotoAPI {
    static let path = "/api/v1/photos"

    let runner: CoreRunner
    let endpoint: ProtocolEndpoint
    let loop: EventLoop
    let loopIndex: Int
    let store: PhotoStore
    let workers: WorkerThreads
    let uploads: PhotoUploads
    let maxPhotoSize: Int
    let uploadTimeoutMilliseconds: Int
    let logger: Logger

    init(runner: CoreRunner, endpoint: ProtocolEndpoint, context: LoopContext, store: PhotoStore, workers: WorkerThreads, uploads: PhotoUploads) {
        self.runner = runner
        self.endpoint = endpoint
        loop = context.loop
        loopIndex = context.loop.index
        self.store = store
        self.workers = workers
        self.uploads = uploads
        maxPhotoSize = context.configuration.maxPhotoSize
        uploadTimeoutMilliseconds = context.configuration.photoUploadTimeoutMilliseconds
        logger = context.logger
    }

    /// How long an upload's body may take from its head on: the timeout, or the declared size
    /// (the largest photo for a chunked body) at the minimum rate if that is longer.
    func uploadDeadline(for framing: PhotoTransfer.BodyFraming, from now: Int64) -> Int64 {
        let size = if case .length(let length) = framing { length } else { maxPhotoSize }
        let bySize = Int64(size) * 1000 / Int64(ServerConfiguration.photoUploadMinimumBytesPerSecond)
        return now + max(Int64(uploadTimeoutMilliseconds), bySize)
    }

    static func serves(_ path: String) -> Bool {
        path == Self.path || path.hasPrefix(Self.path + "/")
    }

    enum Start {
        /// Answered from the head alone.
        case respond(PhotoResponse)
        /// Under way: the connection feeds it the body (if any) and it answers when it can.
        case transfer(PhotoTransfer)
    }

    func begin(_ head: HTTPRequestHead, on connection: Connection) -> Start {
        if head.path == Self.path {
            guard head.method == "PUT" else { return .respond(.error(405, "method_not_allowed", "use PUT", headers: [("Allow", "PUT")])) }
            guard let token = Self.bearerToken(head) else { return .respond(.unauthenticated) }
            let framing: PhotoTransfer.BodyFraming
            switch bodyFraming(head) {
            case .refused(let response): return .respond(response)
            case .framed(let found): framing = found
            }
            let expectsContinue = head.headers.tokens("expect").contains("100-continue")
            let file: PhotoUpload
            do {
                file = try store.beginUpload()
            } catch {
                logger.error("cannot start a photo upload", metadata: ["error": "\(error)"])
                return .respond(.unavailable)
            }
            let transfer = PhotoTransfer(
                upload: framing, into: file, expectsContinue: expectsContinue, tokenHash: SessionToken.hash(token),
                connection: connection, api: self)
            transfer.authorize()
            return .transfer(transfer)
        }
        let hash = String(head.path.dropFirst(Self.path.count + 1))
        guard head.method == "GET" else { return .respond(.error(405, "method_not_allowed", "use GET", headers: [("Allow", "GET")])) }
        guard let token = Self.bearerToken(head) else { return .respond(.unauthenticated) }
        guard PhotoStore.isValidHash(hash) else { return .respond(.error(404, "photo_not_found", "no such photo")) }
        let transfer = PhotoTransfer(download: hash, tokenHash: SessionToken.hash(token), connection: connection, api: self)
        transfer.authorize()
        return .transfer(transfer)
    }

    /// A photo's body: `Content-Length` (checked against the limit now) or chunked (checked as
    /// it arrives). Both at once is refused: which one frames the body is exactly what request
    /// smuggling plays on.
    private enum FramingCheck {
        case framed(PhotoTransfer.BodyFraming)
        case refused(PhotoResponse)
    }

    private func bodyFraming(_ head: HTTPRequestHead) -> FramingCheck {
        let codings = head.headers.tokens("transfer-encoding")
        let lengths = head.headers.values("content-length")
        if !codings.isEmpty {
            guard codings == ["chunked"] else { return .refused(.error(501, "bad_request", "the only transfer coding taken is chunked")) }
            guard lengths.isEmpty else { return .refused(.error(400, "bad_request", "Content-Length and Transfer-Encoding together")) }
            return .framed(.chunked(ChunkedBodyDecoder(maxBodySize: maxPhotoSize)))
        }
        guard let text = lengths.first else { return .refused(.error(411, "bad_request", "send Content-Length or a chunked body")) }
        guard lengths.count == 1, !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return .refused(.error(400, "bad_request", "bad Content-Length"))
        }
        guard let length = Int(text), length <= maxPhotoSize else {
            return .refused(.error(413, "payload_too_large", "a photo is at most \(maxPhotoSize) bytes"))
        }
        guard length > 0 else { return .refused(.error(400, "bad_request", "the photo is empty")) }
        return .framed(.length(length))
    }

    /// The token of `Authorization: Bearer <token>` (the export archive's too).
    static func bearerToken(_ head: HTTPRequestHead) -> String? {
        guard let authorization = head.headers[first: "authorization"] else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else { return nil }
        return String(parts[1])
    }

    /// Asks the core about `transfer`; its answer comes back through the endpoint to the
    /// connection (`Connection.photoAccessDecided`).
    func submit(_ connection: Connection, op: String, _ makeRequest: (ConnectionRef) -> CoreRequestBody) {
        let caller = ConnectionRef(loop: loopIndex, serial: endpoint.register(connection))
        runner.submit(CoreRequest(makeRequest(caller)), op: op)
    }
}
