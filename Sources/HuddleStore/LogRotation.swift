import Glibc
import Synchronization

/// A rotation of the log run off the log's thread, so the owner does not wait for the disk when
/// a segment fills or a snapshot starts: the closing segment's fdatasync, then the creation of
/// the next one (its header synced, renamed, the directory synced) — in that order, because
/// recovery relies on no segment existing after one whose tail is not yet durable
/// (`LogAssessment`). Made by `WriteAheadLog.beginRotation()`, performed once on any thread,
/// handed back with `WriteAheadLog.finishRotation(_:)`. Meanwhile the log holds the records
/// appended after the closing segment in memory and writes them to the new one at the finish.
///
/// The outcome is also kept here, so that a shutdown can wait for it on the log's thread.
public final class LogRotation: Sendable {
    /// Every record up to this one (the closing segment's last) is durable once the sync succeeds.
    public let sequence: UInt64
    let fd: Int32
    let path: String
    let directory: String

    /// What `perform` found: the closing segment's sync, then (only after a successful sync) the
    /// new segment, open for writing.
    public struct Outcome: Sendable {
        public var synced: Result<Void, StoreError>
        var created: Result<NewSegment, StoreError>?
    }

    struct NewSegment: Sendable {
        var fd: Int32
        var info: LogSegmentInfo
    }

    private let finished = Mutex<Outcome?>(nil)

    init(sequence: UInt64, fd: Int32, path: String, directory: String) {
        self.sequence = sequence
        self.fd = fd
        self.path = path
        self.directory = directory
    }

    /// Syncs and closes (its duplicate of) the closing segment, then creates the next one.
    /// Call exactly once. Before it syncs it passes the test gate, if one is installed.
    @discardableResult
    public func perform() -> Outcome {
        LogSyncGate.installed?.pass(sequence: sequence)
        var outcome = Outcome(synced: .success(()), created: nil)
        do {
            try FileIO.syncData(fd, path: path)
        } catch {
            outcome.synced = .failure(error as? StoreError ?? .system(call: "fdatasync", path: path, errno: EIO))
        }
        FileIO.close(fd)
        if case .success = outcome.synced {
            do {
                let (newFD, info) = try WriteAheadLog.createSegment(directory: directory, firstSequence: sequence + 1)
                outcome.created = .success(NewSegment(fd: newFD, info: info))
            } catch {
                outcome.created = .failure(error as? StoreError ?? .system(call: "open", path: directory, errno: EIO))
            }
        }
        finished.withLock { $0 = outcome }
        return outcome
    }

    /// The outcome once `perform` has returned, else nil.
    public var outcome: Outcome? { finished.withLock { $0 } }
}
