import HuddleProtocol
import Testing

@Suite struct JSONWriterTests {
    @Test func writesCompactJSONInMemberOrder() {
        let value: JSONValue = .object([
            ("z", .number("1")), ("a", .array([.null, .bool(true), .bool(false), .number("-2.5e3")])),
            ("nested", .object([("empty", .array([])), ("none", .object([]))])), ("s", .string("x")),
        ])
        #expect(JSONWriter.serialize(value) == #"{"z":1,"a":[null,true,false,-2.5e3],"nested":{"empty":[],"none":{}},"s":"x"}"#)
    }

    @Test func splicesRawJSONVerbatim() {
        let value: JSONValue = .array([.raw(#"{"text":"hi"}"#), .integer(UInt64.max), .integer(Int64.min)])
        #expect(JSONWriter.serialize(value) == #"[{"text":"hi"},18446744073709551615,-9223372036854775808]"#)
    }

    @Test func escapesOnlyWhatJSONRequires() {
        let string = "quote\" backslash\\ slash/ é 😀 del\u{7F} nul\u{0} bs\u{8} tab\t lf\n vt\u{B} ff\u{C} cr\r us\u{1F} \u{2028}"
        let expected = #""quote\" backslash\\ slash/ é 😀 del"# + "\u{7F}"
            + #" nul\u0000 bs\b tab\t lf\n vt\u000b ff\f cr\r us\u001f "# + "\u{2028}\""
        #expect(JSONWriter.serialize(.string(string)) == expected)
    }

    @Test func everyControlCharacterIsEscaped() {
        let short: [UInt8: String] = [0x08: #"\b"#, 0x09: #"\t"#, 0x0A: #"\n"#, 0x0C: #"\f"#, 0x0D: #"\r"#]
        for byte in UInt8(0)..<0x20 {
            let hex = String(byte, radix: 16)
            let escape = short[byte] ?? #"\u00"# + (hex.count == 1 ? "0" + hex : hex)
            // Inside a run long enough for the eight-byte scan, and alone.
            let padding = "abcdefghij"
            let string = padding + String(Unicode.Scalar(byte)) + padding
            #expect(JSONWriter.serialize(.string(string)) == "\"" + padding + escape + padding + "\"")
            #expect(JSONWriter.serialize(.string(String(Unicode.Scalar(byte)))) == "\"" + escape + "\"")
        }
    }

    @Test func appendStringAppendsToWhatIsThere() {
        var output = Array("prefix:".utf8)
        JSONWriter.appendString("a\"b", to: &output)
        JSONWriter.appendString("", to: &output)
        #expect(String(decoding: output, as: UTF8.self) == #"prefix:"a\"b""""#)
    }

    @Test func generatedValuesSurviveAWriteAndParseRoundTrip() throws {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            let value = Self.randomValue(depth: 0, using: &generator)
            var bytes: [UInt8] = []
            JSONWriter.append(value, to: &bytes)
            let parsed = try JSONParser.parse(bytes, maxDepth: 32)
            #expect(parsed == value, "wrote \(String(decoding: bytes, as: UTF8.self))")
            // A second round trip is byte-for-byte stable.
            var again: [UInt8] = []
            JSONWriter.append(parsed, to: &again)
            #expect(again == bytes)
        }
    }

    static func randomValue(depth: Int, using generator: inout SplitMix64) -> JSONValue {
        let kinds: UInt64 = depth >= 6 ? 4 : 6
        switch generator.next() % kinds {
        case 0: return .null
        case 1: return .bool(generator.next() % 2 == 0)
        case 2: return .number(randomNumber(using: &generator))
        case 3: return .string(randomString(using: &generator))
        case 4:
            let count = Int(generator.next() % 5)
            return .array((0..<count).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            let count = Int(generator.next() % 5)
            return .object((0..<count).map { _ in
                (randomString(using: &generator), randomValue(depth: depth + 1, using: &generator))
            })
        }
    }

    static func randomNumber(using generator: inout SplitMix64) -> String {
        var literal = generator.next() % 3 == 0 ? "-" : ""
        literal += generator.next() % 4 == 0 ? "0" : String(generator.next() % 1_000_000 + 1)
        if generator.next() % 3 == 0 { literal += "." + String(generator.next() % 1000) }
        if generator.next() % 4 == 0 { literal += ["e", "E", "e+", "E-"][Int(generator.next() % 4)] + String(generator.next() % 400) }
        return literal
    }

    /// Strings mixing ASCII, the characters JSON escapes, and multi-byte scalars.
    static func randomString(using generator: inout SplitMix64) -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\u{0}", "\u{1}", "\n", "\t", "\u{1F}", "\u{7F}",
                                      "é", "€", "\u{FFFF}", "😀", "\u{10FFFF}", "\u{301}", "\u{2028}"]
        var string = String.UnicodeScalarView()
        for _ in 0..<(generator.next() % 24) {
            string.append(pool[Int(generator.next() % UInt64(pool.count))])
        }
        return String(string)
    }
}
