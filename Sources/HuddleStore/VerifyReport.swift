/// The outcome of `DataDirectoryCheck.verify`.
public struct VerifyReport: Sendable, CustomStringConvertible {
    /// What start-up would do with the directory.
    public enum Outcome: Sendable, Equatable {
        /// Load the newest snapshot and the log after it (cutting a torn tail, if any).
        case sound
        /// Pass over damaged newer snapshots and load an older valid one plus the log after it:
        /// nothing acknowledged is lost, but the damaged files are worth a look.
        case startsFromOlderSnapshot
        /// Refuse to start (see `problems`).
        case refused
    }

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
    /// What makes start-up refuse.
    public var problems: [String] = []
    /// Damaged snapshots newer than the one start-up loads: "name: reason; …".
    public var passedOver: [String] = []
    /// Worth knowing, not wrong: a torn tail start-up will cut, leftover temporary files.
    public var notices: [String] = []

    public var outcome: Outcome {
        if !problems.isEmpty { return .refused }
        return passedOver.isEmpty ? .sound : .startsFromOlderSnapshot
    }

    /// Nothing damaged that start-up needs: it would load the newest snapshot and the log tail.
    public var isSound: Bool { outcome == .sound }

    init(directory: String) {
        self.directory = directory
    }

    public var description: String {
        let verdict = switch outcome {
        case .sound: "sound"
        case .startsFromOlderSnapshot: "recoverable: start-up passes over \(passedOver.count) damaged snapshot(s) for an older one"
        case .refused: "start-up refuses: \(problems.count) problem(s)"
        }
        var lines = ["\(directory): " + verdict]
        for snapshot in snapshots {
            lines.append("  \(snapshot.file)  " + (snapshot.problem.map { "BAD: \($0)" } ?? "ok"))
        }
        for segment in segments {
            let range = segment.recordCount == 0 ? "no records" : "records \(segment.firstSequence)...\(segment.lastSequence)"
            lines.append("  \(segment.file)  \(range)  " + (segment.problem.map { "BAD: \($0)" } ?? "ok"))
        }
        lines += problems.map { "problem: \($0)" }
        lines += passedOver.map { "passed over: \($0)" }
        lines += notices.map { "notice: \($0)" }
        return lines.joined(separator: "\n")
    }
}
