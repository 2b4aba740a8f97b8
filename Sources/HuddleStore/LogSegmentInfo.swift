/// One segment file of an open log.
public struct LogSegmentInfo: Sendable, Equatable {
    public var name: String
    public var firstSequence: UInt64
    /// firstSequence - 1 while the segment holds no record.
    public var lastSequence: UInt64
    public var byteCount: Int

    public var recordCount: Int { Int(lastSequence + 1 - firstSequence) }
}
