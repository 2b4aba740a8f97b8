import HuddleProtocol

/// What the log and snapshots hold (Sources/HuddleStore/README.md, "Records"): a format byte, then
/// the value as compact JSON with every key spelled by hand (`PersistedValue`).
///
/// Format 0 — the first release's, Foundation's `JSONEncoder` over synthesized Codable — had no
/// format byte: a record was the command's JSON and a snapshot `{"format":1,"state":…}`. Both
/// begin with `{`, which no format byte is, so old data is read as it is, without an upgrade
/// step, and the next snapshot writes the state in today's format. The shapes of format 1 are
/// those of format 0, so one reader serves both.
public enum PersistedRecord {
    /// The format written today.
    public static let format: UInt8 = 1
    /// The first byte of a format 0 record or snapshot.
    static let legacyFirstByte = UInt8(ascii: "{")
    /// Deeper than any value the core makes (a kept memory with its points is about 14 levels).
    static let maxDepth = 64

    /// The value after the format byte, or the whole of a format 0 payload.
    static func json(_ payload: [UInt8], what: String) throws(RecordDecodingError) -> (format: UInt8, value: JSONValue) {
        guard let first = payload.first else { throw RecordDecodingError("empty \(what)") }
        let format: UInt8 = first == legacyFirstByte ? 0 : first
        guard format <= Self.format else { throw RecordDecodingError("\(what) format \(format) is newer than this version reads (\(Self.format))") }
        let body = format == 0 ? payload[...] : payload.dropFirst()
        do {
            let value = try body.withUnsafeBytes { bytes throws(JSONError) in try JSONParser.parse(bytes, maxDepth: maxDepth) }
            return (format, value)
        } catch {
            throw RecordDecodingError("\(what) is not valid JSON: \(error)")
        }
    }

    static func encode(_ value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = [format]
        JSONWriter.append(value, to: &bytes)
        return bytes
    }
}

extension CoreCommand {
    /// The log record of this command.
    public var logRecord: [UInt8] { PublicationLogRecord.encode(self) ?? PersistedRecord.encode(persisted) }

    /// Reads a log record of any format this version knows.
    public init(logRecord: [UInt8]) throws(RecordDecodingError) {
        try self.init(persisted: PersistedRecord.json(logRecord, what: "log record").value)
    }
}

extension CoreDurableState {
    /// The snapshot payload of this state.
    public var snapshotPayload: [UInt8] { PersistedRecord.encode(persisted) }

    /// Reads a snapshot payload of any format this version knows.
    public init(snapshotPayload: [UInt8]) throws(RecordDecodingError) {
        let (format, value) = try PersistedRecord.json(snapshotPayload, what: "snapshot")
        guard format == 0 else {
            try self.init(persisted: value)
            return
        }
        // Format 0 wrapped the state with a number of its own, only ever 1.
        let wrapper = try PersistedFields(value, "snapshot")
        let inner: Int = try wrapper("format")
        guard inner == 1 else { throw RecordDecodingError("snapshot format 0.\(inner) is not one this version reads (0.1)") }
        guard let state = wrapper.member("state") else { throw RecordDecodingError("snapshot has no state") }
        try self.init(persisted: state)
    }
}
