import Glibc

/// One fdatasync of the log run off the log's thread, so the owner goes on appending the next
/// batch while this one reaches the disk (pipelined group commit). Made on the log's thread by
/// `WriteAheadLog.beginSync()`, performed once on any thread, and handed back with
/// `WriteAheadLog.finishSync(_:_:)`, which advances `durableSequence`.
///
/// It holds its own duplicate of the segment's descriptor: the log may rotate or close that
/// segment meanwhile, and fdatasync through any descriptor of a file syncs the file.
public struct LogSync: Sendable {
    /// Every record up to this one is on the disk once `perform` succeeds.
    public let sequence: UInt64
    let fd: Int32
    let path: String

    /// fdatasync, then closes the duplicate. Call exactly once. Before it syncs it passes the
    /// test gate, if one is installed (`LogSyncGate`).
    public func perform() -> Result<Void, StoreError> {
        defer { FileIO.close(fd) }
        LogSyncGate.installed?.pass(sequence: sequence)
        do {
            try FileIO.syncData(fd, path: path)
            return .success(())
        } catch let error as StoreError {
            return .failure(error)
        } catch {
            return .failure(.system(call: "fdatasync", path: path, errno: EIO))
        }
    }
}
