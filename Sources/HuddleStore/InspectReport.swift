import Glibc

/// The outcome of `DataDirectoryCheck.inspect`: the files and what they hold.
public struct InspectReport: Sendable, CustomStringConvertible {
    public struct SegmentEntry: Sendable, Equatable {
        public var name: String
        /// From the file name.
        public var firstSequence: UInt64
        public var byteCount = 0
        /// Seconds since 1970 (UTC).
        public var modified: Int64 = 0
        /// Valid records, counted up to any damage.
        public var recordCount = 0
        public var firstRecord: UInt64?
        public var lastRecord: UInt64?
        /// Header problem, damage or read error; nil for a clean file.
        public var note: String?
    }

    public struct SnapshotEntry: Sendable, Equatable {
        public var name: String
        public var lastSequence: UInt64
        public var byteCount = 0
        public var modified: Int64 = 0
        /// From the header (not decompressed: `verify` does that).
        public var payloadByteCount: UInt64?
        public var note: String?
    }

    public struct OtherEntry: Sendable, Equatable {
        public var name: String
        public var byteCount = 0
        public var modified: Int64 = 0
    }

    public var directory: String
    public var segments: [SegmentEntry] = []
    public var snapshots: [SnapshotEntry] = []
    /// Temporary files, the lock file, anything else.
    public var otherFiles: [OtherEntry] = []
    public var problems: [String] = []

    public var logByteCount: Int { segments.reduce(0) { $0 + $1.byteCount } }
    public var recordCount: Int { segments.reduce(0) { $0 + $1.recordCount } }

    init(directory: String) {
        self.directory = directory
    }

    public var description: String {
        var lines = ["\(directory): \(segments.count) segment(s), \(recordCount) record(s), \(logByteCount) byte(s) of log; \(snapshots.count) snapshot(s)"]
        for snapshot in snapshots {
            let payload = snapshot.payloadByteCount.map { ", \($0) bytes uncompressed" } ?? ""
            lines.append("  \(snapshot.name)  \(snapshot.byteCount) bytes\(payload), up to \(snapshot.lastSequence), \(Self.utc(snapshot.modified))"
                + (snapshot.note.map { "  (\($0))" } ?? ""))
        }
        for segment in segments {
            let records = segment.firstRecord.map { "\(segment.recordCount) record(s) \($0)...\(segment.lastRecord ?? $0)" } ?? "no records"
            lines.append("  \(segment.name)  \(segment.byteCount) bytes, \(records), \(Self.utc(segment.modified))"
                + (segment.note.map { "  (\($0))" } ?? ""))
        }
        for file in otherFiles {
            lines.append("  \(file.name)  \(file.byteCount) bytes, \(Self.utc(file.modified))")
        }
        lines += problems.map { "problem: \($0)" }
        return lines.joined(separator: "\n")
    }

    /// ISO 8601 in UTC, e.g. 2025-01-31T09:05:00Z.
    static func utc(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
