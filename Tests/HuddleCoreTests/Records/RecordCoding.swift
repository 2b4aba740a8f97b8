@testable import HuddleCore

/// Values through the log's and snapshots' format (`PersistedRecord`), for tests that pin it.
enum RecordCoding {
    static func roundTrip(_ state: CoreDurableState) throws -> CoreDurableState {
        try CoreDurableState(snapshotPayload: state.snapshotPayload)
    }

    static func roundTrip(_ command: CoreCommand) throws -> CoreCommand {
        try CoreCommand(logRecord: command.logRecord)
    }

    /// The JSON a record or snapshot holds after its format byte.
    static func json(_ value: some PersistedValue) -> String {
        String(decoding: PersistedRecord.encode(value.persisted).dropFirst(), as: UTF8.self)
    }

    /// A command from the JSON of a format 1 record.
    static func command(_ json: String) throws -> CoreCommand {
        try CoreCommand(logRecord: [PersistedRecord.format] + Array(json.utf8))
    }

    /// A state from the JSON of a format 1 snapshot.
    static func state(_ json: String) throws -> CoreDurableState {
        try CoreDurableState(snapshotPayload: [PersistedRecord.format] + Array(json.utf8))
    }

    /// Any persisted value from its JSON.
    static func value<Value: PersistedValue>(_ type: Value.Type, _ json: String) throws -> Value {
        let (_, parsed) = try PersistedRecord.json([PersistedRecord.format] + Array(json.utf8), what: "value")
        return try Value(persisted: parsed)
    }
}
