import ChildProcessExit
import HuddleProtocol
import Testing

@testable import huddle_loadtest

/// The fast path must read exactly what the server sends, and step aside for anything else.
@Suite(.ownThread) struct PublicationScannerTests {
    private func data(_ stamp: Stamp) -> String {
        var bytes: [UInt8] = []
        JSONWriter.append(stamp.json(padding: "xxxx"), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func readsTheServersOwnEncoding() {
        let stamp = Stamp(publisher: 12, sequence: 345, intended: 9_876_543_210_123)
        for (from, clientID) in [("alice", nil), (nil, nil), ("a\"b\\c", "m-1")] as [(String?, String?)] {
            let event = ServerMessage.publicationEvent(
                channel: "room:lt-\"quoted\"", epoch: "lq3k2b-1", offset: 43, type: "message", from: from, data: data(stamp),
                time: 1_763_712_000_123, clientID: clientID)
            #expect(PublicationScanner.scan(event) == .init(epoch: "lq3k2b-1", offset: 43, stamp: stamp))
        }
    }

    @Test func stepsAsideForAnythingElse() {
        let others = [
            #"{"event":"presence","user":"bob","online":true,"time":1}"#,
            #"{"id":"7","ok":true,"result":{}}"#,
            #"{"event":"publication","channel":"room:a","epoch":"e","offset":1,"type":"message","from":null,"data":{"text":"hi"},"time":1}"#,
            #"{"channel":"room:a","event":"publication","epoch":"e","offset":1,"type":"message","from":null,"data":{"p":1,"s":2,"t":3},"time":1}"#,
            #"{"event":"publication","channel":"room:a","epoch":"e","offset":-1,"type":"message","from":null,"data":{"p":1,"s":2,"t":3},"time":1}"#,
            #"{"event":"publication","channel":"room:a","epoch":"e","offset":1,"type":"message","from":null,"data":{"p":1,"s":2,"t":"#,
            #"{"event":"publication","channel":"room:a"#,
            "",
        ]
        for text in others {
            #expect(PublicationScanner.scan(Array(text.utf8)) == nil, "\(text)")
        }
    }
}
