import Glibc
import Synchronization

/// Photos as files in the data directory, named by the SHA-256 of their bytes (content
/// addressing: the same bytes are stored once, whoever uploads them).
///
///     DIR/<first 2 hex digits>/<64 hex digits>   a photo
///     DIR/tmp/                                   uploads being written (emptied at start-up)
///
/// A photo is written to `tmp/`, fsynced, renamed into place and its directory fsynced, so a
/// name that exists always holds the whole photo, and `store` returns only once a crash can no
/// longer lose it. The calls block on the disk: run them on a worker thread, never on an I/O
/// loop or the core. Who may read a photo is the core's business (`PhotoOwnership`), not the
/// store's.
public final class PhotoStore: Sendable {
    public let directory: String
    private let temporaryDirectory: String
    private let temporaryCounter = Atomic<UInt64>(0)

    /// Creates the directories if missing and removes uploads a stop interrupted (never
    /// renamed, so nothing refers to them). Call it while holding the data directory (after the
    /// log is open), so no other server is writing there. In a directory several servers share
    /// (cluster mode), each names its own `temporaryName` (`tmp-<node>`): one server's start
    /// must not remove another's uploads in progress, nor two servers' uploads share a name.
    public init(directory: String, temporaryName: String = "tmp") throws {
        self.directory = directory
        temporaryDirectory = directory + "/" + temporaryName
        try FileIO.makeDirectories(temporaryDirectory)
        for name in try FileIO.listDirectory(temporaryDirectory) {
            try FileIO.unlink(temporaryDirectory + "/" + name)
        }
    }

    /// Whether `hash` can name a photo: 64 lowercase hex digits. Anything else never reaches a
    /// path, so a name cannot climb out of the directory.
    public static func isValidHash(_ hash: String) -> Bool {
        hash.utf8.count == 64 && hash.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// A new upload: an empty temporary file to stream the body into. Opening it does not block
    /// on the disk the way `commit` does, so an I/O loop may call it.
    public func beginUpload() throws -> PhotoUpload {
        let counter = temporaryCounter.add(1, ordering: .relaxed).newValue
        return try PhotoUpload(path: temporaryDirectory + "/upload." + String(counter) + ".tmp")
    }

    /// Makes `upload` the photo named `hash` (the SHA-256 of its bytes, computed by the caller as
    /// they arrived) unless a photo by that name exists. Returns whether this call wrote the file.
    /// Either way the photo is durable on return. Blocks on the disk: run it on a worker.
    @discardableResult
    public func commit(_ upload: PhotoUpload, hash: String) throws -> Bool {
        precondition(Self.isValidHash(hash), "not a photo hash: \(hash)")
        let shard = directory + "/" + String(hash.prefix(2))
        let path = shard + "/" + hash
        try FileIO.makeDirectories(shard)
        if access(path, F_OK) == 0 {
            // Another upload of the same bytes may have renamed it an instant ago without syncing
            // the directory yet; the caller is about to rely on the name.
            try FileIO.syncDirectory(shard)
            return false
        }
        try upload.syncAndClose()
        // Two uploads of the same bytes may both get here: rename replaces one whole file by an
        // identical one, so readers see either, never a mix.
        try FileIO.rename(upload.path, path)
        upload.markCommitted()
        try FileIO.syncDirectory(shard)
        return true
    }

    /// Stores `bytes` under `hash` (the caller computed it) unless a photo by that name exists:
    /// `beginUpload` and `commit` in one call.
    @discardableResult
    public func store(_ bytes: [UInt8], hash: String) throws -> Bool {
        let upload = try beginUpload()
        try bytes.withUnsafeBytes { try upload.write($0) }
        return try commit(upload, hash: hash)
    }

    /// Removes the photo named `hash` (nobody owns it any more); none there is not an error.
    /// Blocks on the disk: run it on a worker.
    public func remove(hash: String) throws {
        guard Self.isValidHash(hash) else { return }
        let shard = directory + "/" + String(hash.prefix(2))
        do {
            try FileIO.unlink(shard + "/" + hash)
        } catch StoreError.system(_, _, let code) where code == ENOENT {
            return
        }
        try FileIO.syncDirectory(shard)
    }

    /// The hashes of every stored photo, for the start-up sweep of photos nobody owns.
    public func storedHashes() throws -> [String] {
        var hashes: [String] = []
        for shard in try FileIO.listDirectory(directory) where shard.utf8.count == 2 {
            for name in try FileIO.listDirectory(directory + "/" + shard) where Self.isValidHash(name) && name.hasPrefix(shard) {
                hashes.append(name)
            }
        }
        return hashes
    }

    /// The photo named `hash` opened for reading in pieces, or nil when there is none.
    public func open(hash: String) throws -> PhotoReader? {
        guard Self.isValidHash(hash) else { return nil }
        let path = directory + "/" + String(hash.prefix(2)) + "/" + hash
        let fd: Int32
        do {
            fd = try FileIO.open(path, O_RDONLY)
        } catch StoreError.system(_, _, let code) where code == ENOENT {
            return nil
        }
        do {
            return PhotoReader(path: path, fd: fd, size: try FileIO.size(fd, path: path))
        } catch {
            FileIO.close(fd)
            throw error
        }
    }

    /// The bytes of the photo named `hash`, or nil when there is none.
    public func read(hash: String) throws -> [UInt8]? {
        guard let photo = try open(hash: hash) else { return nil }
        return try photo.read(at: 0, count: photo.size)
    }
}
