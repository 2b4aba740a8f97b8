import Foundation
@testable import HuddleCore
import Testing

/// The log's and snapshots' bytes are pinned by golden files (Golden/README.md): a change to the
/// format shows up here and is made on purpose, with a new format byte. Data written by format 0
/// still reads.
@Suite struct RecordGoldenTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: golden.appendingPathComponent(name)))
    }

    /// Every sample command's record, each followed by a newline (JSON never holds a raw one).
    static var commandRecords: [UInt8] {
        RecordSamples.commands.flatMap { $0.logRecord + [0x0A] }
    }

    /// `HUDDLE_WRITE_GOLDEN=1` rewrites the format 1 files: for a deliberate format change only.
    @Test func writeTheGoldenFilesWhenAsked() throws {
        guard ProcessInfo.processInfo.environment["HUDDLE_WRITE_GOLDEN"] == "1" else { return }
        try Data(Self.commandRecords).write(to: Self.golden.appendingPathComponent("commands-1.records"))
        try Data(RecordSamples.state.snapshotPayload).write(to: Self.golden.appendingPathComponent("state-1.payload"))
    }

    @Test func commandsEncodeToTheGoldenRecords() throws {
        #expect(Self.commandRecords == (try Self.read("commands-1.records")))
    }

    @Test func theGoldenRecordsDecodeToTheSameCommands() throws {
        let lines = try Self.read("commands-1.records").split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        let samples = RecordSamples.commands
        #expect(lines.count == samples.count)
        for (line, command) in zip(lines, samples) {
            #expect(line.first == PersistedRecord.format)
            #expect(try CoreCommand(logRecord: Array(line)) == command)
        }
    }

    @Test func theStateEncodesToTheGoldenSnapshotAndBack() throws {
        let golden = try Self.read("state-1.payload")
        let state = RecordSamples.state
        #expect(state.snapshotPayload == golden)
        #expect(try CoreDurableState(snapshotPayload: golden) == state)
        // The samples reach every part of the state.
        let empty = CoreDurableState()
        #expect(state.accounts != empty.accounts && state.sessions != empty.sessions && state.channels != empty.channels)
        #expect(state.friendships != empty.friendships && state.readMarkers != empty.readMarkers && state.feed != empty.feed)
        #expect(state.activityStatuses != empty.activityStatuses && state.activityMatches != empty.activityMatches && state.places != empty.places)
        #expect(state.memories != empty.memories && state.photos != empty.photos)
        #expect(state.keptResults.count(of: "alice") == RecordSamples.replies.count - 1)
    }

    /// Format 0: what the first release's JSONEncoder wrote for the same values.
    @Test func formatZeroRecordsDecodeToTheSameCommands() throws {
        let lines = try Self.read("commands-0.jsonl").split(separator: 0x0A)
        let samples = RecordSamples.commands
        #expect(lines.count == samples.count)
        for (line, command) in zip(lines, samples) {
            #expect(line.first == UInt8(ascii: "{"))
            #expect(try CoreCommand(logRecord: Array(line)) == command)
        }
    }

    @Test func aFormatZeroSnapshotDecodesToTheSameState() throws {
        #expect(try CoreDurableState(snapshotPayload: Self.read("state-0.json")) == RecordSamples.state)
    }

    @Test func unknownFormatsAndDamagedRecordsAreRefused() throws {
        let record = RecordSamples.commands[0].logRecord
        let newer = [PersistedRecord.format + 1] + record.dropFirst()
        #expect(throws: RecordDecodingError("log record format 2 is newer than this version reads (1)")) { try CoreCommand(logRecord: newer) }
        #expect(throws: RecordDecodingError.self) { try CoreCommand(logRecord: []) }
        #expect(throws: RecordDecodingError.self) { try CoreCommand(logRecord: Array(record.dropLast())) }
        #expect(throws: RecordDecodingError.self) { try RecordCoding.command(#"{"noSuchCommand":{"time":1}}"#) }
        #expect(throws: RecordDecodingError.self) { try RecordCoding.command(#"{"markRead":{"user":"bob","channel":"c","time":1}}"#) }
        #expect(throws: RecordDecodingError.self) { try CoreDurableState(snapshotPayload: Array(#"{"format":2,"state":{}}"#.utf8)) }
    }
}
