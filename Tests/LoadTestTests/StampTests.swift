import ChildProcessExit
import HuddleProtocol
import Testing

@testable import huddle_loadtest

/// The stamp every test message carries must come back exactly, and nothing else may pass for one.
@Suite(.ownThread) struct StampTests {
    @Test func textRoundTripsAndIsPaddedToTheSize() {
        let stamp = Stamp(publisher: 3, sequence: 41, intended: 12_345_678_901_234)
        let text = stamp.text(size: 64)
        #expect(text.count == 64)
        #expect(String(decoding: text, as: UTF8.self).hasPrefix("3 41 12345678901234 xxx"))
        #expect(Stamp(text: text) == stamp)
        #expect(Stamp(text: stamp.text(size: 0)) == stamp)  // never shorter than its numbers
    }

    @Test func foreignTextIsNotAStamp() {
        for junk in ["", "hello", "1 2", "1 2 x ", "-1 2 3 ", "1  2 3 ", "99999999999999999999 1 1 "] {
            #expect(Stamp(text: Array(junk.utf8)) == nil, "\(junk)")
        }
    }

    @Test func jsonRoundTripsThroughTheWire() throws {
        let stamp = Stamp(publisher: 7, sequence: 0, intended: UInt64.max)
        var bytes: [UInt8] = []
        JSONWriter.append(stamp.json(padding: "xx"), to: &bytes)
        let parsed = try JSONParser.parse(bytes, maxDepth: 8)
        #expect(Stamp(json: parsed) == stamp)
        #expect(Stamp(json: try JSONParser.parse(Array(#"{"text": "hi"}"#.utf8), maxDepth: 8)) == nil)
    }
}
