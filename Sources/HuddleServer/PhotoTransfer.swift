import HuddleCore
import HuddleCrypto
import HuddleIO
import HuddleProtocol
import HuddleStore
import HuddleWebSocket

/// One photo request, from its head to its response (protocol.md, "Photos").
///
/// An upload asks the core whether the token may upload while the body arrives (bounded by
/// `--max-photo-size` as it arrives). The body goes straight to a temporary file, hashed as it
/// streams, so an upload held one byte short holds no memory; the core's yes takes one of the
/// server's upload slots (`PhotoUploads`). With both done, a worker syncs the file and renames it
/// into place, then the core records the owner (a logged command, within the user's photo
/// quota), and only then is the answer sent — so a 201 survives a crash. A download asks the
/// core whether the token's user owns the photo, then a worker reads the file.
///
/// Confined to its connection's loop; worker jobs only carry it back there (a `LoopBound`).
final class PhotoTransfer {
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
    /// The upload's temporary file (removed when this ends without a commit) and the hash of
    /// what went into it.
    private var file: PhotoUpload?
    private let digest = SHA256Digest()
    /// A chunked body's decoded bytes of one read, on their way to the file.
    private var decoded: [UInt8] = []
    private var bodyComplete = false
    /// The user whose upload slot this holds, until `finish`.
    private var slotHolder: Username?
    /// When the whole body must have arrived (`PhotoAPI.uploadDeadline`); it never moves.
    let bodyDeadline: Int64

    init(upload framing: BodyFraming, into file: PhotoUpload, expectsContinue: Bool, tokenHash: [UInt8], connection: Connection, api: PhotoAPI) {
        kind = .upload(framing)
        self.file = file
        self.expectsContinue = expectsContinue
        self.tokenHash = tokenHash
        self.connection = connection
        self.api = api
        bodyDeadline = api.uploadDeadline(for: framing, from: api.loop.now)
    }

    init(download hash: String, tokenHash: [UInt8], connection: Connection, api: PhotoAPI) {
        kind = .download(hash: hash)
        expectsContinue = false
        self.tokenHash = tokenHash
        self.connection = connection
        self.api = api
        bodyComplete = true
        bodyDeadline = .max
    }

    deinit {
        // A connection that closed mid-upload drops its transfer without a `finish`.
        if let slotHolder { api.uploads.release(for: slotHolder) }
        if let file { api.uploads.spooledBytes.subtract(file.byteCount, ordering: .relaxed) }
    }

    /// While true, `bodyDeadline` applies.
    var isReceivingBody: Bool {
        guard case .upload = kind else { return false }
        return !bodyComplete && stage != .finished
    }

    func authorize() {
        guard let connection else { return }
        let tokenHash = self.tokenHash
        switch kind {
        case .upload(let framing):
            let size = if case .length(let length) = framing { length } else { api.maxPhotoSize }
            api.submit(connection, op: "photo_upload") { .authorizePhotoUpload(caller: $0, tokenHash: tokenHash, size: size) }
        case .download(let hash):
            api.submit(connection, op: "photo_download") { .authorizePhotoRead(caller: $0, tokenHash: tokenHash, hash: hash) }
        }
    }

    // MARK: The body

    /// Bytes that arrived after the head, written to the file as they come. Whatever follows a
    /// complete body is not the photo and is ignored (the connection closes after the response).
    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard case .upload(var framing) = kind, !bodyComplete, stage != .finished, let file else { return }
        do {
            switch framing {
            case .length(let length):
                try write(UnsafeRawBufferPointer(rebasing: bytes.prefix(length - file.byteCount)), to: file)
                bodyComplete = file.byteCount == length
            case .chunked(var decoder):
                decoded.removeAll(keepingCapacity: true)
                do {
                    _ = try decoder.decode(bytes, into: &decoded)
                } catch {
                    return finish(.error(error.status, error.status == 413 ? "payload_too_large" : "bad_request", error.reason))
                }
                try decoded.withUnsafeBytes { try write($0, to: file) }
                bodyComplete = decoder.isComplete
                framing = .chunked(decoder)
                kind = .upload(framing)
            }
        } catch {
            // A full or failing disk: worth retrying later, like a write the log refuses.
            api.logger.error("cannot write a photo upload", metadata: ["error": "\(error)"])
            return finish(.unavailable)
        }
        if bodyComplete, stage == .awaitingBody { store() }
    }

    private func write(_ bytes: UnsafeRawBufferPointer, to file: PhotoUpload) throws {
        try file.write(bytes)
        digest.update(bytes)
        api.uploads.spooledBytes.add(bytes.count, ordering: .relaxed)
    }

    /// The deadline passed with the body still arriving.
    func timedOut() {
        api.uploads.countRefusal("timeout")
        finish(.error(
            408, "upload_timeout",
            "the body must arrive within \(api.uploadTimeoutMilliseconds / 1000) s, longer for a large photo (64 KiB/s)"))
    }

    // MARK: The core's answers

    func decided(_ outcome: PhotoAccessOutcome) {
        guard case .decided(let access) = outcome else { return finish(.unavailable) }
        switch (stage, access) {
        case (_, .refused(let error)):
            if error.code == .photoQuotaExceeded { api.uploads.countRefusal("quota") }
            finish(.refused(error))
        case (.authorizing, .uploadAllowed(let user)):
            if let refusal = api.uploads.acquire(for: user) {
                let message = refusal == .userBusy
                    ? "at most \(api.uploads.maxUploadsPerUser) uploads per user at once" : "too many uploads in progress"
                return finish(.error(
                    429, "too_many_uploads", message, headers: [("Retry-After", "1")], retryAfterMilliseconds: 1000))
            }
            slotHolder = user
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
        guard let file else { return }
        stage = .working
        let hash = Hex.encode(digest.finish())
        let store = api.store
        let transfer = LoopBound(self, loop: api.loop)
        api.workers.run {
            let outcome = Result { try store.commit(file, hash: hash) }
            transfer.execute { $0.stored(hash: hash, size: file.byteCount, outcome) }
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
        let transfer = LoopBound(self, loop: api.loop)
        api.workers.run {
            let outcome = Result { try store.read(hash: hash) }
            transfer.execute { $0.readDone(hash: hash, outcome) }
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
        if let holder = slotHolder {
            slotHolder = nil
            api.uploads.release(for: holder)
        }
        if let file {
            // Removes the temporary file unless `commit` renamed it.
            api.uploads.spooledBytes.subtract(file.byteCount, ordering: .relaxed)
            self.file = nil
        }
        decoded = []
        connection?.finishPhotoRequest(self, response)
    }
}
