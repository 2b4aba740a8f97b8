import Glibc

/// A photo being received, written straight to a temporary file in the photo store's `tmp/`
/// as it arrives, so an upload holds no more memory than the read it came in. `PhotoStore.commit`
/// makes it a photo; dropping it unfinished removes the file.
///
/// Writes go to the page cache (no fsync until `commit`, which runs on a worker): the same trade
/// nginx makes for its client_body_temp files. Used by one thread at a time: the connection's
/// loop while it arrives, then the worker that commits it (hence the unchecked Sendable).
// Sendable: one thread at a time; each hand-over is a queued task (loop to worker), which orders it.
public final class PhotoUpload: @unchecked Sendable {
    let path: String
    private(set) var fd: Int32
    /// Bytes written so far.
    public private(set) var byteCount = 0
    private var committed = false

    init(path: String) throws {
        self.path = path
        fd = try FileIO.open(path, O_WRONLY | O_CREAT | O_EXCL)
    }

    deinit {
        if fd >= 0 { FileIO.close(fd) }
        if !committed { _ = Glibc.unlink(path) }
    }

    /// Appends `bytes`; throws `StoreError.system` (ENOSPC, EIO, EFBIG) and then the upload is
    /// worth nothing.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        try FileIO.write(fd, bytes, at: byteCount, path: path)
        byteCount += bytes.count
    }

    /// Syncs and closes the file before it is renamed into place.
    func syncAndClose() throws {
        try FileIO.syncData(fd, path: path)
        FileIO.close(fd)
        fd = -1
    }

    /// The file now has its final name (or another upload's identical one); nothing to remove.
    func markCommitted() { committed = true }
}
