import Glibc

/// Why the log or a snapshot could not do what was asked.
///
/// `corruptLog` and `corruptSnapshot` name the file (relative to the data directory) so an
/// operator can look at it; the store never drops data silently to get past them.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed: which one, on which path, and errno at the time.
    case system(call: String, path: String, errno: Int32)
    /// The log cannot be trusted past `offset` of `file`, and cutting there would lose records
    /// that were (or may have been) acknowledged.
    case corruptLog(file: String, offset: Int, reason: String)
    /// A snapshot failed its checks.
    case corruptSnapshot(file: String, reason: String)
    /// Snapshot files exist but none of them passed its checks; the reasons, newest first.
    case noValidSnapshot(reasons: [String])
    /// A record larger than `LogFormat.maximumRecordPayload` was offered; nothing was written.
    case recordTooLarge(size: Int, limit: Int)
    /// Another open log (this process or another) holds the data directory.
    case directoryLocked(path: String)
    /// The log refuses writes: a sync failed, so what reached the disk is unknown, or it was closed.
    case logUnusable(reason: String)
    /// zlib could not compress a snapshot (in practice: out of memory).
    case compressionFailed(reason: String)
    /// Replay asked for records that are no longer (or not yet) in the log.
    case recordsUnavailable(requestedAfter: UInt64, firstAvailable: UInt64)
    /// A snapshot write was given up by its caller before it finished (the shutdown budget ran
    /// out); its temporary file is removed, nothing else changed.
    case snapshotAbandoned

    /// errno of a failed system call, if that is what this is.
    public var errno: Int32? {
        if case .system(_, _, let code) = self { return code }
        return nil
    }

    public var description: String {
        switch self {
        case .system(let call, let path, let code):
            return "\(call) \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .corruptLog(let file, let offset, let reason):
            return "corrupt log \(file) at offset \(offset): \(reason)"
        case .corruptSnapshot(let file, let reason):
            return "corrupt snapshot \(file): \(reason)"
        case .noValidSnapshot(let reasons):
            return "no valid snapshot: " + reasons.joined(separator: "; ")
        case .recordTooLarge(let size, let limit):
            return "record of \(size) bytes exceeds the \(limit)-byte limit"
        case .directoryLocked(let path):
            return "data directory \(path) is in use by another open log"
        case .logUnusable(let reason):
            return "log unusable: \(reason)"
        case .compressionFailed(let reason):
            return "snapshot compression failed: \(reason)"
        case .recordsUnavailable(let after, let first):
            return "records after \(after) requested, but the log continues only from \(first)"
        case .snapshotAbandoned:
            return "snapshot abandoned before it was complete"
        }
    }
}
