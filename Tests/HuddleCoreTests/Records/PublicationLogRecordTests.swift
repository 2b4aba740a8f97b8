@testable import HuddleCore
import Testing

/// A publication's log record is written directly (`PublicationLogRecord`); its bytes must be
/// the generic encoding's, whatever the strings hold, or the log would hold two formats.
@Suite struct PublicationLogRecordTests {
    static let strings = ["", "room:lobby", #"{"text":"a \"quoted\" \\ word"}"#, "tab\tnew\nline\u{0}\u{1F}", "é ü 🙂 \u{7F}", String(repeating: "x", count: 300)]

    @Test func aPublicationsRecordIsTheGenericEncoding() {
        var commands: [CoreCommand] = []
        for text in Self.strings {
            for from in [nil, "alice", text] as [String?] {
                for time: Int64 in [0, 1763712000123, -5, .max, .min] {
                    commands.append(.publish(channel: "room:\(text)", from: from, type: text, data: text, time: time))
                    commands.append(.publishWithClientID(channel: text, from: from, type: "message", data: #"{"n":1}"#, clientID: text, time: time))
                }
            }
        }
        for command in commands {
            #expect(command.logRecord == PersistedRecord.encode(command.persisted))
            #expect((try? CoreCommand(logRecord: command.logRecord)) == command)
        }
    }

    @Test func otherCommandsTakeTheGenericPath() {
        #expect(PublicationLogRecord.encode(.markRead(user: "bob", channel: "room:a", offset: 3, time: 9)) == nil)
    }
}
