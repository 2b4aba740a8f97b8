import Glibc

/// What one full pass over a segment file found.
struct SegmentSummary: Sendable {
    var name: String
    /// From the file name (and checked against the header).
    var firstSequence: UInt64
    var fileSize: Int
    /// Why the header is unusable; no records were read then.
    var headerProblem: String?
    /// Valid records from the start, up to the first damaged one.
    var recordCount = 0
    /// Offset just past the last valid record.
    var validEnd = LogFormat.segmentHeaderSize
    var damage: SegmentDamage?
    /// Offset of a valid record found after `damage`: proof the damage is not a torn tail.
    var validRecordAfterDamage: Int?

    /// The last valid record's sequence; firstSequence - 1 when there is none.
    var lastSequence: UInt64 { firstSequence - 1 + UInt64(recordCount) }

    /// Reads and checks every record of the segment open on `fd`.
    static func scan(fd: Int32, directory: String, name: String, firstSequence: UInt64) throws -> SegmentSummary {
        let path = pathIn(directory, name)
        let size = try FileIO.size(fd, path: path)
        var summary = SegmentSummary(name: name, firstSequence: firstSequence, fileSize: size)
        summary.headerProblem = try SegmentRecordWalker.headerProblem(fd: fd, path: path, firstSequence: firstSequence)
        guard summary.headerProblem == nil else {
            summary.validEnd = 0
            return summary
        }
        var walker = SegmentRecordWalker(fd: fd, path: path, end: size)
        var expected = firstSequence
        scanning: while true {
            switch try walker.next(expecting: expected, copyPayload: false) {
            case .record:
                summary.recordCount += 1
                expected += 1
            case .end:
                break scanning
            case .damaged(let damage):
                summary.damage = damage
                if damage.couldBeTornWrite {
                    summary.validRecordAfterDamage = try SegmentRecordWalker.validRecordOffset(
                        fd: fd, path: path, end: size, after: damage.offset, lastGoodSequence: expected - 1)
                }
                break scanning
            }
        }
        summary.validEnd = walker.offset
        return summary
    }

    /// Opens `name` read-only, scans it, closes it.
    static func scan(directory: String, name: String, firstSequence: UInt64) throws -> SegmentSummary {
        let fd = try FileIO.open(pathIn(directory, name), O_RDONLY)
        defer { FileIO.close(fd) }
        return try scan(fd: fd, directory: directory, name: name, firstSequence: firstSequence)
    }
}
