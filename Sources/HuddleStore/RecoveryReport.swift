/// What opening the log found and did, for the start-up log line.
public struct RecoveryReport: Sendable, Equatable, CustomStringConvertible {
    /// Bytes cut off the end of the last segment: a record whose write never completed.
    public struct TruncatedTail: Sendable, Equatable {
        public var file: String
        public var offset: Int
        public var bytesRemoved: Int
        public var reason: String
    }

    /// The data directory did not exist and was created.
    public var createdDirectory = false
    public var segmentCount = 0
    /// Records on disk after recovery (including any a snapshot already covers).
    public var recordCount = 0
    /// The oldest record still on disk, nil if none.
    public var firstSequence: UInt64?
    public var lastSequence: UInt64 = 0
    public var truncatedTail: TruncatedTail?
    /// Half-created segment files left by an interrupted rotation, deleted.
    public var removedTemporaryFiles: [String] = []
    /// Sequences the log had lost but the snapshot holds (the log was not synced when the snapshot
    /// was written); the log continues after them.
    public var coveredOnlyBySnapshot: ClosedRange<UInt64>?

    public var description: String {
        var parts = ["log: \(segmentCount) segment(s), \(recordCount) record(s)"]
        if let firstSequence { parts.append("sequences \(firstSequence)...\(lastSequence)") } else {
            parts.append("last sequence \(lastSequence)")
        }
        if createdDirectory { parts.append("created the data directory") }
        if let tail = truncatedTail {
            parts.append("cut \(tail.bytesRemoved) byte(s) at offset \(tail.offset) of \(tail.file) (\(tail.reason))")
        }
        if !removedTemporaryFiles.isEmpty { parts.append("removed \(removedTemporaryFiles.joined(separator: ", "))") }
        if let range = coveredOnlyBySnapshot {
            parts.append("records \(range.lowerBound)...\(range.upperBound) only in the snapshot; log continues after them")
        }
        return parts.joined(separator: "; ")
    }
}
