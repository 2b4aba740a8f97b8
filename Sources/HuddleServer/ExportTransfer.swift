import HuddleCore
import HuddleIO
import HuddleProtocol
import HuddleStore
import HuddleWebSocket
import Logging

/// One export archive, from its head to its last byte (protocol.md, "Export").
///
/// The core checks the token and the user's export interval and builds `export.json` in one
/// step (what `account_export` returns). A worker serializes it and lists the photos it names;
/// their sizes, known from the core, make the archive's length known before its first byte, so
/// the response has a `Content-Length` (clients show progress). Then the archive is written as
/// the reader takes it: `export.json`, then each photo read from disk by a worker in chunks,
/// one read at a time, and only while the connection's queue has room. So a slow reader holds
/// at most `queueWindow` bytes queued plus the chunk being read, besides `export.json` itself
/// (kept until queued; its size is bounded by the per-user limits), however large the archive.
///
/// "Room" is counted from the queue's last full drain, not by what is still unsent: the
/// transport's queue keeps the bytes it has written until it drains whole, so refilling it as
/// it empties, never letting it drain, would grow it by the whole archive. Refilled only once
/// it has drained, it holds at most the window; the kernel's send buffer, full at that moment,
/// keeps the reader busy while a worker reads the next chunks.
///
/// Each photo is opened when its turn comes and read through that descriptor to its end, so a
/// photo removed meanwhile is still sent whole. One gone, or of another size than the core
/// recorded, before its turn (only an account deleted meanwhile, or a file removed by hand) ends
/// the response short of its `Content-Length`: the client sees a failed download, never a
/// complete-looking archive with something missing.
///
/// Confined to its connection's loop; worker jobs only carry it back there (a `LoopBound`).
final class ExportTransfer {
    /// Bytes a worker reads from a photo at a time.
    static let chunkSize = 64 * 1024
    /// Once this much was queued since the queue last drained, nothing more is read until it
    /// drains again.
    static let queueWindow = 256 * 1024

    private enum Stage {
        /// Waiting for the core's verdict and the document.
        case authorizing
        /// A worker is serializing the document.
        case preparing
        /// The head went out; the archive follows as the reader takes it.
        case streaming
        case finished
    }

    private enum Entry {
        case document
        case photo(hash: String, size: Int)
    }

    private var stage = Stage.authorizing
    private let tokenHash: [UInt8]
    private weak var connection: Connection?
    private let api: ExportAPI
    /// The export slot (`ExportGate`), held until `end`.
    private var holdsSlot = true
    private var user: Username = ""
    private var startedAt: Int64 = 0
    /// When the archive's files say they were modified: the export's start.
    private var modified: Int64 = 0
    private var document: [UInt8] = []
    private var entries: [Entry] = []
    private var entryIndex = 0
    /// Bytes of the current entry queued so far.
    private var entryOffset = 0
    /// The current photo, opened by the worker that read its first chunk.
    private var reader: PhotoReader?
    private var reading = false
    private var everythingQueued = false
    /// Bytes queued since the connection's queue last drained whole: what the queue holds.
    private var queuedSinceDrain = 0
    private var contentLength = 0
    /// The transport's written-bytes count last added to the bytes-sent metric.
    private var writtenMark = 0
    /// When the reader last took bytes, or bytes were queued for a reader with none waiting.
    private var lastProgress: Int64 = 0
    private var waitsForReader = false {
        didSet {
            guard waitsForReader != oldValue else { return }
            api.gate.waitingForReader.add(waitsForReader ? 1 : -1, ordering: .relaxed)
        }
    }

    init(tokenHash: [UInt8], connection: Connection, api: ExportAPI) {
        self.tokenHash = tokenHash
        self.connection = connection
        self.api = api
    }

    deinit {
        // A connection that closed mid-export drops its transfer without an `end`. The last
        // reference may go on a worker's thread: only thread-safe things here (the loop's
        // clock is not; the monotonic clock is the one it reads).
        if holdsSlot { api.gate.release() }
        if stage == .streaming { account(for: .disconnected, at: MonotonicClock.milliseconds()) }
        if waitsForReader { api.gate.waitingForReader.subtract(1, ordering: .relaxed) }
    }

    func authorize() {
        guard let connection else { return }
        let tokenHash = self.tokenHash
        api.photos.submit(connection, op: "export") { .exportArchive(caller: $0, tokenHash: tokenHash) }
    }

    /// Still answering: the response is not complete yet.
    var isUnderWay: Bool { stage != .finished }

    // MARK: The core's answer

    func decided(_ outcome: PhotoAccessOutcome) {
        guard stage == .authorizing else { return }
        guard case .decided(let access) = outcome else { return answer(.unavailable) }
        switch access {
        case .refused(let error):
            answer(api.refusal(error))
        case .exportAllowed(let user, let document):
            prepare(user: user, document)
        default:
            api.logger.error("unexpected answer to an export request", metadata: ["answer": "\(access)"])
            answer(.internalError)
        }
    }

    /// The document's bytes and the photos it lists, made on a worker: a heavy user's document
    /// is megabytes, which an I/O loop would take milliseconds of every connection's time to write.
    private func prepare(user: Username, _ document: JSONValue) {
        stage = .preparing
        self.user = user
        let transfer = LoopBound(self, loop: api.loop)
        api.workers.run {
            var bytes: [UInt8] = []
            JSONWriter.append(document, to: &bytes)
            var photos: [(hash: String, size: Int)] = []
            if case .array(let listed)? = document["photos"] {
                for photo in listed {
                    guard let hash = photo["hash"]?.stringValue, let size = photo["size"]?.int64Value else { continue }
                    photos.append((hash, Int(size)))
                }
            }
            transfer.execute { [bytes, photos] in $0.prepared(bytes, photos: photos) }
        }
    }

    private func prepared(_ bytes: [UInt8], photos: [(hash: String, size: Int)]) {
        guard stage == .preparing, let connection else { return }
        stage = .streaming
        document = bytes
        entries = [.document] + photos.map { Entry.photo(hash: $0.hash, size: $0.size) }
        contentLength = TarArchive.archiveLength(fileSizes: [bytes.count] + photos.map(\.size))
        startedAt = api.loop.now
        modified = WallClock.milliseconds() / 1000
        api.gate.countStarted()
        writtenMark = connection.transport.writtenBytes
        let head = HTTPResponseWriter.head(
            status: 200,
            headers: [
                ("Content-Type", "application/x-tar"), ("Content-Disposition", "attachment; filename=\"huddle-export-\(user).tar\""),
                ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
            ],
            contentLength: contentLength)
        enqueue(head)
        pump()
    }

    // MARK: Streaming

    /// Queues what it can without reading past the window: the document from memory, a photo
    /// through a worker (one chunk at a time), the archive's end last.
    private func pump() {
        guard stage == .streaming, !reading, connection != nil else { return }
        while queuedSinceDrain + Self.chunkSize <= Self.queueWindow {
            guard entryIndex < entries.count else {
                if !everythingQueued {
                    everythingQueued = true
                    enqueue(TarArchive.end)
                }
                return
            }
            switch entries[entryIndex] {
            case .document:
                if entryOffset == 0 { enqueue(TarArchive.header(name: "export.json", size: document.count, modified: modified)) }
                let end = min(document.count, entryOffset + Self.chunkSize)
                enqueue(Array(document[entryOffset..<end]))
                entryOffset = end
                if entryOffset == document.count {
                    endEntry(size: document.count)
                    document = []
                }
            case .photo(let hash, let size):
                return read(hash, size: size)
            }
        }
        waitsForReader = true
    }

    private func read(_ hash: String, size: Int) {
        reading = true
        let (offset, reader, store) = (entryOffset, self.reader, api.store)
        let count = min(Self.chunkSize, size - offset)
        let transfer = LoopBound(self, loop: api.loop)
        api.workers.run {
            let outcome = Result { () throws -> (PhotoReader, [UInt8])? in
                guard let file = try reader ?? store.open(hash: hash), file.size == size else { return nil }
                return (file, try file.read(at: offset, count: count))
            }
            transfer.execute { $0.chunkRead(hash: hash, size: size, count: count, outcome) }
        }
    }

    private func chunkRead(hash: String, size: Int, count: Int, _ outcome: Result<(PhotoReader, [UInt8])?, any Error>) {
        reading = false
        guard stage == .streaming, connection != nil else { return }
        switch outcome {
        case .success((let file, let bytes)?) where bytes.count == count:
            if entryOffset == 0 {
                reader = file
                let name = "photos/\(hash).\(Self.fileExtension(PhotoContentType.of(bytes)))"
                enqueue(TarArchive.header(name: name, size: size, modified: modified))
            }
            enqueue(bytes)
            entryOffset += bytes.count
            if entryOffset == size {
                reader = nil
                endEntry(size: size)
            }
            pump()
        case .success:
            api.logger.error("a photo of an export is gone or changed on disk", metadata: ["user": "\(user)", "hash": "\(hash)"])
            end(.photoUnreadable)
        case .failure(let error):
            api.logger.error("cannot read a photo of an export", metadata: ["user": "\(user)", "hash": "\(hash)", "error": "\(error)"])
            end(.photoUnreadable)
        }
    }

    private func endEntry(size: Int) {
        let padding = TarArchive.paddingLength(after: size)
        if padding > 0 { enqueue([UInt8](repeating: 0, count: padding)) }
        entryIndex += 1
        entryOffset = 0
    }

    private func enqueue(_ bytes: [UInt8]) {
        guard let connection else { return }
        if connection.queuedOutputBytes == 0 { lastProgress = api.loop.now }
        connection.queueExportBytes(self, bytes)
        queuedSinceDrain += bytes.count
        api.gate.observeQueued(queuedSinceDrain)
    }

    /// The connection wrote (`progressed`: some bytes left): count them, and queue more once
    /// the queue has drained, or end once the archive's last byte is out.
    func wrote(progressed: Bool) {
        guard stage == .streaming, let connection else { return }
        let written = connection.transport.writtenBytes
        api.gate.bytesSent.add(written - writtenMark, ordering: .relaxed)
        writtenMark = written
        if progressed { lastProgress = api.loop.now }
        guard connection.queuedOutputBytes == 0 else { return }
        queuedSinceDrain = 0
        if everythingQueued {
            end(nil)
        } else {
            waitsForReader = false
            pump()
        }
    }

    /// A reader that took nothing for the idle timeout while bytes wait is dropped.
    func checkDeadline(now: Int64) {
        guard stage == .streaming, let connection, connection.queuedOutputBytes > 0,
              now - lastProgress >= api.idleTimeoutMilliseconds
        else { return }
        api.logger.info("export reader stalled", metadata: ["user": "\(user)", "peer": "\(connection.peer)"])
        end(.readerStalled)
    }

    // MARK: The end

    /// Answered before the archive began (a refusal, an error).
    private func answer(_ response: PhotoResponse) {
        stage = .finished
        releaseSlot()
        connection?.finishExportRequest(self, response)
    }

    /// The archive's last byte left (`failure` nil), or it ends short of its length.
    private func end(_ failure: ExportGate.Failure?) {
        stage = .finished
        releaseSlot()
        waitsForReader = false
        reader = nil
        document = []
        account(for: failure, at: api.loop.now)
        if failure != nil {
            connection?.abortExport(self)
        } else {
            connection?.endExport(self)
        }
    }

    /// The export's metric and its log line: the user, the archive's length, how long it took
    /// (never the token).
    private func account(for failure: ExportGate.Failure?, at now: Int64) {
        var metadata: Logger.Metadata = ["user": "\(user)", "bytes": "\(contentLength)", "seconds": "\(Double(now - startedAt) / 1000)"]
        if let failure {
            api.gate.countFailure(failure)
            metadata["reason"] = "\(failure.rawValue)"
            api.logger.info("export ended early", metadata: metadata)
        } else {
            api.gate.countCompleted()
            api.logger.info("export sent", metadata: metadata)
        }
    }

    private func releaseSlot() {
        guard holdsSlot else { return }
        holdsSlot = false
        api.gate.release()
    }

    /// The file name's extension for a photo of this media type (`PhotoContentType`).
    static func fileExtension(_ contentType: String) -> String {
        switch contentType {
        case "image/jpeg": "jpg"
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "image/heic": "heic"
        default: "bin"
        }
    }
}
