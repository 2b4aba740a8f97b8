import Glibc

/// `huddle data backup`: a consistent copy of a data directory while its server keeps writing,
/// with no help from the server.
///
/// Consistent because of how the store writes: snapshots are written whole under `.tmp` and
/// renamed, closed segments never change, and the active segment only grows by CRC-framed
/// records. So the backup lists the directory once, copies the newest snapshot and the segments
/// from the one holding the record after it, in order. Every write acknowledged before the
/// listing is in those files (an acknowledged write has been appended, and the copy reads
/// through the same page cache). The last segment may end in a record the server was writing
/// during the copy: recovery cuts such a torn tail, exactly as after a crash, so it costs only
/// writes made after the backup began. If the server drops a listed file meanwhile (a newer
/// snapshot let it delete old segments), the backup starts over from a new listing, at most a
/// few times. Photos are immutable, named by their hash, and copied after the log, so every
/// photo the copied log refers to is there.
public enum DataDirectoryBackup {
    public struct Result: Sendable {
        public var snapshot: String?
        public var segments: [String]
        public var photos: Int
        public var bytes: Int
        public var attempts: Int
    }

    static let maxAttempts = 5

    /// Copies `source` into `destination`, which must not exist or be empty. Every file and the
    /// directory are synced before it returns.
    public static func copy(from source: String, to destination: String) throws -> Result {
        try FileIO.makeDirectories(destination)
        guard try FileIO.listDirectory(destination).isEmpty else {
            throw StoreError.system(call: "backup into a non-empty directory", path: destination, errno: ENOTEMPTY)
        }
        var attempt = 1
        while true {
            do {
                var result = try copyOnce(from: source, to: destination)
                result.attempts = attempt
                return result
            } catch StoreError.system(_, _, ENOENT) where attempt < maxAttempts {
                // A listed file went away: the server took a snapshot and dropped what it covers.
                for name in try FileIO.listDirectory(destination) where name != "photos" {
                    try FileIO.unlink(destination + "/" + name)
                }
                attempt += 1
            }
        }
    }

    private static func copyOnce(from source: String, to destination: String) throws -> Result {
        let listing = try DataDirectoryListing(directory: source)
        let snapshot = listing.snapshots.last
        let after = (snapshot?.lastSequence ?? 0) + 1
        // The segment holding `after` is the last one starting at or before it; later ones follow.
        let start = listing.segments.lastIndex { $0.firstSequence <= after } ?? 0
        let segments = listing.segments[start...].map(\.name)
        var bytes = 0
        if let snapshot { bytes += try copyFile(source + "/" + snapshot.name, to: destination + "/" + snapshot.name) }
        for name in segments { bytes += try copyFile(source + "/" + name, to: destination + "/" + name) }
        var photos = 0
        let photoDirectory = source + "/photos"
        if listing.otherFiles.contains("photos") {
            for shard in try FileIO.listDirectory(photoDirectory) where shard != "tmp" {
                let shardPath = photoDirectory + "/" + shard
                let target = destination + "/photos/" + shard
                try FileIO.makeDirectories(target)
                for name in try FileIO.listDirectory(shardPath) where !name.hasSuffix(".tmp") {
                    var info = stat()
                    if stat(target + "/" + name, &info) == 0 { continue }
                    bytes += try copyFile(shardPath + "/" + name, to: target + "/" + name)
                    photos += 1
                }
                try FileIO.syncDirectory(target)
            }
        }
        try FileIO.syncDirectory(destination)
        return Result(snapshot: snapshot?.name, segments: segments, photos: photos, bytes: bytes, attempts: 1)
    }

    /// Copies what `source` holds now, to a new file synced to disk; returns the byte count.
    private static func copyFile(_ source: String, to destination: String) throws -> Int {
        let input = try FileIO.open(source, O_RDONLY)
        defer { FileIO.close(input) }
        let output = try FileIO.open(destination, O_WRONLY | O_CREAT | O_EXCL)
        defer { FileIO.close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes { try FileIO.read(input, into: $0, at: offset, path: source) }
            guard count > 0 else { break }
            try buffer.withUnsafeBytes { try FileIO.write(output, UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: offset, path: destination) }
            offset += count
        }
        try FileIO.syncAll(output, path: destination)
        return offset
    }
}
