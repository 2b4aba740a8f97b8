import Glibc

/// A stored photo opened for reading in pieces (the export archive streams each photo in
/// chunks rather than holding it whole). The open descriptor keeps the bytes readable even if
/// the photo is removed meanwhile (its last owner deleted): a file is never changed in place,
/// only renamed into place whole or unlinked, so what was opened is what is read to the end.
///
/// Reads block on the disk: run them on a worker. Used by one thread at a time, each hand-over
/// a queued task (hence the unchecked Sendable); the descriptor is closed when it is dropped.
// Sendable: one thread at a time; each hand-over is a queued task (loop to worker), which orders it.
public final class PhotoReader: @unchecked Sendable {
    private let path: String
    private let fd: Int32
    /// The file's size when it was opened.
    public let size: Int

    init(path: String, fd: Int32, size: Int) {
        self.path = path
        self.fd = fd
        self.size = size
    }

    deinit {
        FileIO.close(fd)
    }

    /// Up to `count` bytes from `offset`; fewer only at the end of the file.
    public func read(at offset: Int, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let read = try bytes.withUnsafeMutableBytes { try FileIO.read(fd, into: $0, at: offset, path: path) }
        if read < count { bytes.removeSubrange(read...) }
        return bytes
    }
}
