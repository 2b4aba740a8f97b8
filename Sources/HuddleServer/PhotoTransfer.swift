import HuddleCore
import HuddleIO
import HuddleProtocol
import HuddleStore
import HuddleWebSocket

/// One photo request, from its head to its response (protocol.md, "Photos").
///
/// An upload asks the core whether the token may upload while the body arrives (bounded by
/// `--max-photo-size` as it arrives); with both done, a worker hashes and stores the bytes,
/// then the core records the owner (a logged command), and only then is the answer sent — so
/// a 201 survives a crash. A download asks the core whether the token's user owns the photo,
/// then a worker reads the file.
///
/// Confined to its connection's loop; worker jobs only carry it back there (`loop.execute`),
/// hence the unchecked Sendable.
final class PhotoTransfer: @unchecked Sendable {
    enum BodyFraming {
        case length(Int)
        case chunked(ChunkedBodyDecoder)
    }

    private enum Stage {
        /// Waiting for the core's verdict on the token (and, for an upload, for the body).
        case authorizing
        /// Upload allowed; the body is still arriving.
        case awaitingBody
        /// A worker is hashing and storing, or reading.
        case working
        /// The core is recording the owner.
        case recording
        case finished
    }

    private enum Kind {
        case upload(BodyFraming)
        case download(hash: String)
    }

    private var kind: Kind
    private var stage = Stage.authorizing
    private let tokenHash: [UInt8]
    private let expectsContinue: Bool
    private weak var connection: Connection?
    private let api: PhotoAPI
    private var body: [UInt8] = []
    private var bodyComplete = false

    init(upload framing: BodyFraming, expectsContinue: Bool, tokenHash: [UInt8], connection: Connection, api: PhotoAPI) {
        kind = .upload(framing)
        self.expectsContinue = expectsContinue
        self.tokenHash = tokenHash
        self.connection = connection
        self.api = api
        if case .length(let length) = framing { body.reserveCapacity(length) }
    }

    init(download hash: String, tokenHash: [UInt8], connection: Connection, api: PhotoAPI) {
        kind = .download(hash: hash)
        expectsContinue = false
        self.tokenHash = tokenHash
        self.connection = connection
        self.api = api
        bodyComplete = true
    }

    /// While true, the connection's body deadline applies (it moves with every read).
    var isReceivingBody: Bool {
        guard case .upload = kind else { return false }
        return !bodyComplete && stage != .finished
    }

    func authorize() {
        guard let connection else { return }
        let tokenHash = self.tokenHash
        switch kind {
        case .upload:
            api.submit(connection, op: "photo_upload") { .authorizePhotoUpload(caller: $0, tokenHash: tokenHash) }
        case .download(let hash):
            api.submit(connection, op: "photo_download") { .authorizePhotoRead(caller: $0, tokenHash: tokenHash, hash: hash) }
        }
    }

    // MARK: The body

    /// Bytes that arrived after the head. Whatever follows a complete body is not the photo
    /// and is ignored (the connection closes after the response).
    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard case .upload(var framing) = kind, !bodyComplete, stage != .finished else { return }
        switch framing {
        case .length(let length):
            body.append(contentsOf: bytes.prefix(length - body.count))
            bodyComplete = body.count == length
        case .chunked(var decoder):
            do {
                _ = try decoder.decode(bytes, into: &body)
            } catch {
                return finish(.error(error.status, error.status == 413 ? "payload_too_large" : "bad_request", error.reason))
            }
            bodyComplete = decoder.isComplete
            framing = .chunked(decoder)
            kind = .upload(framing)
        }
        if bodyComplete, stage == .awaitingBody { store() }
    }

    // MARK: The core's answers

    func decided(_ outcome: PhotoAccessOutcome) {
        guard case .decided(let access) = outcome else { return finish(.unavailable) }
        switch (stage, access) {
        case (_, .refused(let error)):
            finish(.refused(error))
        case (.authorizing, .uploadAllowed):
            stage = .awaitingBody
            if bodyComplete {
                store()
            } else if expectsContinue {
                connection?.continuePhotoUpload(self)
            }
        case (.recording, .stored(let hash, let size, let newlyOwned)):
            var result: [UInt8] = []
            JSONWriter.append(.object([("hash", .string(hash)), ("size", .integer(size))]), to: &result)
            finish(PhotoResponse(status: newlyOwned ? 201 : 200, body: result))
        case (.authorizing, .readAllowed(let hash, _)):
            read(hash)
        default:
            api.logger.error("unexpected answer to a photo request", metadata: ["answer": "\(access)"])
            finish(.internalError)
        }
    }

    // MARK: Worker jobs

    private func store() {
        stage = .working
        let bytes = body
        body = []
        let store = api.store
        let loop = api.loop
        api.workers.run { [self] in
            let hash = Self.hex(Crypto.sha256(bytes))
            let outcome = Result { try store.store(bytes, hash: hash) }
            loop.execute { self.stored(hash: hash, size: bytes.count, outcome) }
        }
    }

    private func stored(hash: String, size: Int, _ outcome: Result<Bool, any Error>) {
        guard stage == .working, let connection else { return }
        if case .failure(let error) = outcome {
            // A full or failing disk: worth retrying later, like a write the log refuses.
            api.logger.error("cannot store a photo", metadata: ["hash": "\(hash)", "error": "\(error)"])
            return finish(.unavailable)
        }
        stage = .recording
        let tokenHash = self.tokenHash
        api.submit(connection, op: "photo_upload") { .recordPhoto(caller: $0, tokenHash: tokenHash, hash: hash, size: size) }
    }

    private func read(_ hash: String) {
        stage = .working
        let store = api.store
        let loop = api.loop
        api.workers.run { [self] in
            let outcome = Result { try store.read(hash: hash) }
            loop.execute { self.readDone(hash: hash, outcome) }
        }
    }

    private func readDone(hash: String, _ outcome: Result<[UInt8]?, any Error>) {
        guard stage == .working else { return }
        switch outcome {
        case .success(let bytes?):
            finish(PhotoResponse(
                status: 200,
                headers: [
                    ("ETag", "\"\(hash)\""), ("Cache-Control", "private, max-age=31536000, immutable"),
                    ("X-Content-Type-Options", "nosniff"),
                ],
                contentType: PhotoContentType.of(bytes), body: bytes))
        case .success(nil):
            // Owned but gone from the disk (removed by hand): the owner may upload it again.
            api.logger.error("an owned photo is missing from the data directory", metadata: ["hash": "\(hash)"])
            finish(.error(404, "photo_not_found", "no such photo"))
        case .failure(let error):
            api.logger.error("cannot read a photo", metadata: ["hash": "\(hash)", "error": "\(error)"])
            finish(.internalError)
        }
    }

    private func finish(_ response: PhotoResponse) {
        guard stage != .finished else { return }
        stage = .finished
        body = []
        connection?.finishPhotoRequest(self, response)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
