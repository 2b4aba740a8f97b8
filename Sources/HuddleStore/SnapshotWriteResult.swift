/// What writing a snapshot produced and removed.
public struct SnapshotWriteResult: Sendable, Equatable {
    public var file: String
    public var byteCount: Int
    /// Older snapshots deleted by the retention rule.
    public var removedFiles: [String]
    /// The sequence of the snapshot kept as fallback (0 if none). Pass it to
    /// `WriteAheadLog.removeSegments(upTo:)`: the log must still hold what follows the fallback,
    /// or falling back to it would be useless.
    public var olderSnapshotSequence: UInt64
}
