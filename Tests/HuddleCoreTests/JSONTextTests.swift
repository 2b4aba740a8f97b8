@testable import HuddleCore
import Testing

@Suite struct JSONTextTests {
    @Test func escapesWhatRFC8259Requires() {
        #expect(JSONText.string("plain é ✓") == "\"plain é ✓\"")
        #expect(JSONText.string("a\"b\\c") == #""a\"b\\c""#)
        #expect(JSONText.string("\n\r\t\u{08}\u{0C}") == #""\n\r\t\b\f""#)
        #expect(JSONText.string("\u{00}\u{1F}\u{7F}") == "\"\\u0000\\u001f\u{7F}\"")
        #expect(JSONText.string("/") == "\"/\"")
    }

    @Test func buildsObjectsInOrder() {
        #expect(JSONText.object([("b", "1"), ("a", JSONText.string("x\"y"))]) == #"{"b":1,"a":"x\"y"}"#)
        #expect(JSONText.object([]) == "{}")
    }
}
