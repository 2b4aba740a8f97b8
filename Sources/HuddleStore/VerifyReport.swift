/// The outcome of `DataDirectoryCheck.verify`.
public struct VerifyReport: Sendable, CustomStringConvertible {
    public struct SnapshotVerdict: Sendable, Equatable {
        public var file: String
        public var lastSequence: UInt64
        /// Why it failed its checks; nil when it is valid.
        public var problem: String?
    }

    public struct SegmentVerdict: Sendable, Equatable {
        public var file: String
        public var firstSequence: UInt64
        /// Of the last valid record (firstSequence - 1 if none).
        public var lastSequence: UInt64
        public var recordCount: Int
        public var problem: String?
    }

    public var directory: String
    public var snapshots: [SnapshotVerdict] = []
    public var segments: [SegmentVerdict] = []
    /// What start-up would load.
    public var newestValidSnapshot: UInt64?
    /// Damage and inconsistencies: start-up would refuse, or fall back to an older snapshot.
    public var problems: [String] = []
    /// Worth knowing, not wrong: a torn tail start-up will cut, leftover temporary files.
    public var notices: [String] = []

    /// Nothing damaged: start-up would load the newest snapshot and the whole log tail.
    public var isSound: Bool { problems.isEmpty }

    init(directory: String) {
        self.directory = directory
    }

    public var description: String {
        var lines = ["\(directory): " + (isSound ? "sound" : "\(problems.count) problem(s)")]
        for snapshot in snapshots {
            lines.append("  \(snapshot.file)  " + (snapshot.problem.map { "BAD: \($0)" } ?? "ok"))
        }
        for segment in segments {
            let range = segment.recordCount == 0 ? "no records" : "records \(segment.firstSequence)...\(segment.lastSequence)"
            lines.append("  \(segment.file)  \(range)  " + (segment.problem.map { "BAD: \($0)" } ?? "ok"))
        }
        lines += problems.map { "problem: \($0)" }
        lines += notices.map { "notice: \($0)" }
        return lines.joined(separator: "\n")
    }
}
