import HuddleProtocol
import Testing

@Suite struct JSONParserTests {
    struct Accepted: Sendable, CustomTestStringConvertible {
        var json: String
        var value: JSONValue
        var testDescription: String { json }
    }

    static let accepted: [Accepted] = [
        // Literals and numbers, kept as written.
        Accepted(json: "null", value: .null),
        Accepted(json: "true", value: .bool(true)),
        Accepted(json: "false", value: .bool(false)),
        Accepted(json: "0", value: .number("0")),
        Accepted(json: "-0", value: .number("-0")),
        Accepted(json: "42", value: .number("42")),
        Accepted(json: "-17", value: .number("-17")),
        Accepted(json: "0.5", value: .number("0.5")),
        Accepted(json: "-0.0", value: .number("-0.0")),
        Accepted(json: "1e5", value: .number("1e5")),
        Accepted(json: "1E+2", value: .number("1E+2")),
        Accepted(json: "2.5e-3", value: .number("2.5e-3")),
        Accepted(json: "0e0", value: .number("0e0")),
        Accepted(json: "123456789012345678901234567890", value: .number("123456789012345678901234567890")),
        // Strings.
        Accepted(json: #""""#, value: .string("")),
        Accepted(json: #""hello""#, value: .string("hello")),
        Accepted(json: #""a\"b\\c\/d\be\ff\ng\rh\ti""#, value: .string("a\"b\\c/d\u{8}e\u{C}f\ng\rh\ti")),
        Accepted(json: #""\u0041\u00e9\u20AC""#, value: .string("Aé€")),
        Accepted(json: #""\u0000""#, value: .string("\u{0}")),
        Accepted(json: #""\ud83d\ude00""#, value: .string("😀")),
        Accepted(json: #""\uD834\uDD1E""#, value: .string("𝄞")),
        Accepted(json: #""x\uDBFF\uDFFFy""#, value: .string("x\u{10FFFF}y")),
        Accepted(json: "\"κόσμε 😀 ok\"", value: .string("κόσμε 😀 ok")),
        Accepted(json: "\"\u{7F}\"", value: .string("\u{7F}")),
        Accepted(json: #""a long string without any escapes, longer than a word""#,
                 value: .string("a long string without any escapes, longer than a word")),
        Accepted(json: #""a long string with an escape after a few words\n""#,
                 value: .string("a long string with an escape after a few words\n")),
        Accepted(json: #""\\\\\\\\\\\\\\\\\\""#, value: .string(#"\\\\\\\\\"#)),
        // Containers.
        Accepted(json: "[]", value: .array([])),
        Accepted(json: "{}", value: .object([])),
        Accepted(json: "[1,[2,[3]],{}]", value: .array([.number("1"), .array([.number("2"), .array([.number("3")])]), .object([])])),
        Accepted(json: #"{"a":1,"b":[true,null],"c":{"d":"e"}}"#, value: .object([
            ("a", .number("1")), ("b", .array([.bool(true), .null])), ("c", .object([("d", .string("e"))])),
        ])),
        Accepted(json: #"{"k":1,"k":2}"#, value: .object([("k", .number("1")), ("k", .number("2"))])),
        Accepted(json: #"{"":0}"#, value: .object([("", .number("0"))])),
        // Whitespace per RFC 8259: space, tab, LF, CR, anywhere between tokens.
        Accepted(json: " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" :\tnull }\n ", value: .object([
            ("a", .array([.number("1"), .number("2")])), ("b", .null),
        ])),
        Accepted(json: " 7 ", value: .number("7")),
    ]

    @Test(arguments: accepted)
    func acceptsValidJSON(_ sample: Accepted) throws {
        #expect(try JSONParser.parse(Array(sample.json.utf8), maxDepth: 32) == sample.value)
    }

    struct Rejected: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var testDescription: String { name }
        init(_ json: String) {
            name = json
            bytes = Array(json.utf8)
        }
        init(name: String, bytes: [UInt8]) {
            self.name = name
            self.bytes = bytes
        }
    }

    static let rejected: [Rejected] = [
        Rejected(name: "empty", bytes: []),
        Rejected("   "),
        Rejected("01"), Rejected("-01"), Rejected("1."), Rejected(".5"), Rejected("+1"), Rejected("-"),
        Rejected("1e"), Rejected("1e+"), Rejected("1.e3"), Rejected("0x10"), Rejected("1 2"),
        Rejected("NaN"), Rejected("Infinity"), Rejected("-Infinity"),
        Rejected("tru"), Rejected("nul"), Rejected("True"), Rejected("nulll"),
        Rejected("[1,]"), Rejected(#"{"a":1,}"#), Rejected("[,1]"), Rejected("[1 2]"), Rejected("["), Rejected("]"),
        Rejected(#"{"a"}"#), Rejected(#"{"a" 1}"#), Rejected(#"{a:1}"#), Rejected("{'a':1}"), Rejected("{1:2}"),
        Rejected(#"{"a":1"#), Rejected("[1}"), Rejected(#"{"a":1]"#),
        Rejected("// comment\n1"), Rejected("/* c */ 1"), Rejected("[1] // c"),
        Rejected(#""abc"#), Rejected(#"""#), Rejected(#""\x""#), Rejected(#""\u12""#), Rejected(#""\u12G4""#),
        Rejected(#""\"#), Rejected(#""\'""#),
        // Surrogates must come in escaped high-low pairs.
        Rejected(#""\ud800""#), Rejected(#""\udc00""#), Rejected(#""\ud800x""#), Rejected(#""\ud800\u0041""#),
        Rejected(#""\ud800\ud800""#), Rejected(#""\ude00\ud83d""#), Rejected(#""\ud800\n""#),
        // Raw control characters in strings.
        Rejected(name: "raw NUL in string", bytes: Array(#""a"#.utf8) + [0x00] + Array(#"b""#.utf8)),
        Rejected(name: "raw LF in string", bytes: Array("\"a\nb\"".utf8)),
        Rejected(name: "raw TAB in string", bytes: Array("\"a\tb\"".utf8)),
        Rejected(name: "raw 0x1F in a long string", bytes: Array(#""abcdefghijklmnop"#.utf8) + [0x1F] + Array(#"q""#.utf8)),
        // Invalid UTF-8 inside strings, with and without escapes elsewhere.
        Rejected(name: "lone continuation byte", bytes: [0x22, 0x80, 0x22]),
        Rejected(name: "overlong slash", bytes: [0x22, 0xC0, 0xAF, 0x22]),
        Rejected(name: "UTF-8 encoded surrogate", bytes: [0x22, 0xED, 0xA0, 0x80, 0x22]),
        Rejected(name: "above U+10FFFF", bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]),
        Rejected(name: "truncated sequence before quote", bytes: [0x22, 0x61, 0xE2, 0x82, 0x22]),
        Rejected(name: "0xFF after an escape", bytes: Array(#""\n"#.utf8) + [0xFF, 0x22]),
        Rejected(name: "dangling lead byte before an escape", bytes: [0x22, 0xC3] + Array(#"\u00a9""#.utf8)),
        Rejected(name: "invalid UTF-8 in a key", bytes: [0x7B, 0x22, 0xFE, 0x22, 0x3A, 0x31, 0x7D]),
        // Whitespace outside RFC 8259's four characters.
        Rejected(name: "form feed", bytes: [0x0C, 0x31]),
        Rejected(name: "vertical tab", bytes: [0x31, 0x0B]),
        Rejected(name: "no-break space", bytes: [0xC2, 0xA0, 0x31]),
        Rejected(name: "byte order mark", bytes: [0xEF, 0xBB, 0xBF, 0x31]),
    ]

    @Test(arguments: rejected)
    func rejectsInvalidJSON(_ sample: Rejected) {
        #expect(throws: JSONError.self) { try JSONParser.parse(sample.bytes, maxDepth: 32) }
        do {
            _ = try JSONParser.parse(sample.bytes, maxDepth: 32)
        } catch {
            guard case .syntax(let message) = error else {
                Issue.record("expected a syntax error, got \(error)")
                return
            }
            #expect(message.contains("at byte"), "the message gives a position: \(message)")
        }
    }

    @Test func syntaxErrorsNameTheOffendingByte() {
        #expect(throws: JSONError.syntax("unexpected ']' at byte 3 where a value should start")) {
            try JSONParser.parse(Array("[1,]".utf8), maxDepth: 32)
        }
        #expect(throws: JSONError.syntax("leading zero in number at byte 1")) {
            try JSONParser.parse(Array("[01]".utf8), maxDepth: 32)
        }
        #expect(throws: JSONError.syntax("unexpected end of input at byte 6 (expected ',' or '}')")) {
            try JSONParser.parse(Array(#"{"a":1"#.utf8), maxDepth: 32)
        }
        #expect(throws: JSONError.syntax("unpaired surrogate escape at byte 2")) {
            try JSONParser.parse(Array(#"["\ud800"]"#.utf8), maxDepth: 32)
        }
        #expect(throws: JSONError.syntax("unescaped control character 0xa in string at byte 2")) {
            try JSONParser.parse(Array("\"a\nb\"".utf8), maxDepth: 32)
        }
        #expect(throws: JSONError.syntax("unexpected byte 0xff at byte 0 where a value should start")) {
            try JSONParser.parse([0xFF], maxDepth: 32)
        }
    }

    /// Nesting `depth` levels of arrays or objects, innermost empty.
    static func nested(_ depth: Int, objects: Bool) -> [UInt8] {
        let open = objects ? #"{"a":"# : "["
        let close = objects ? "}" : "]"
        let innermost = objects ? "{}" : "[]"
        return Array((String(repeating: open, count: depth - 1) + innermost + String(repeating: close, count: depth - 1)).utf8)
    }

    @Test(arguments: [false, true])
    func depthLimitCountsEveryContainer(objects: Bool) throws {
        _ = try JSONParser.parse(Self.nested(32, objects: objects), maxDepth: 32)
        #expect(throws: JSONError.tooDeep) { try JSONParser.parse(Self.nested(33, objects: objects), maxDepth: 32) }
        // Scalars add no depth; mixed containers count alike.
        _ = try JSONParser.parse(Array("[{\"a\":[1]}]".utf8), maxDepth: 3)
        #expect(throws: JSONError.tooDeep) { try JSONParser.parse(Array("[{\"a\":[[]]}]".utf8), maxDepth: 3) }
        #expect(throws: JSONError.tooDeep) { try JSONParser.parse(Array("[]".utf8), maxDepth: 0) }
        #expect(try JSONParser.parse(Array("5".utf8), maxDepth: 0) == .number("5"))
    }

    @Test func megabyteOfOpenBracketsFailsAtTheLimitWithoutRecursing() {
        let brackets = [UInt8](repeating: UInt8(ascii: "["), count: 1 << 20)
        #expect(throws: JSONError.tooDeep) { try JSONParser.parse(brackets, maxDepth: 32) }
        let braces = Array(String(repeating: #"{"k":"#, count: 200_000).utf8)
        #expect(throws: JSONError.tooDeep) { try JSONParser.parse(braces, maxDepth: 32) }
    }

    @Test func parsesFromARawBufferSlice() throws {
        let bytes = Array(#"xx{"a":"b"}yy"#.utf8)
        let value = try bytes.withUnsafeBytes { raw in
            try JSONParser.parse(UnsafeRawBufferPointer(rebasing: raw[2..<11]), maxDepth: 2)
        }
        #expect(value == .object([("a", .string("b"))]))
    }

    @Test func everyEscapedBMPCharacterDecodes() throws {
        // Every code unit outside the surrogates, escaped, in strings of several lengths so the
        // escape lands in and across the eight-byte scan.
        for unit in stride(from: 0, through: 0xFFFF, by: 7) where !(0xD800...0xDFFF).contains(unit) {
            let hex = String(unit, radix: 16)
            let escape = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            let prefix = String(repeating: "p", count: unit % 11)
            let json = "\"" + prefix + escape + "tail\""
            let expected = prefix + String(Character(Unicode.Scalar(UInt32(unit))!)) + "tail"
            #expect(try JSONParser.parse(Array(json.utf8), maxDepth: 1) == .string(expected))
        }
    }

    @Test func everyRawControlCharacterIsRejectedAndEveryOtherASCIIByteKept() throws {
        for byte in UInt8(0)..<0x80 where byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
            let bytes = Array(#""0123456789"#.utf8) + [byte] + Array(#"x""#.utf8)
            if byte < 0x20 {
                #expect(throws: JSONError.self) { try JSONParser.parse(bytes, maxDepth: 1) }
            } else {
                let value = try JSONParser.parse(bytes, maxDepth: 1)
                #expect(value == .string("0123456789" + String(Unicode.Scalar(byte)) + "x"))
            }
        }
    }

    @Test func stringValidityMatchesTheStandardLibraryOnRandomBytes() {
        // Random bytes between quotes, skewed toward UTF-8 lead and continuation bytes: the
        // parser must accept exactly the ones that are valid UTF-8 with no quote, backslash or
        // control character.
        var generator = SplitMix64(seed: 0x5EED)
        let alphabet: [UInt8] = [0x41, 0x7E, 0x80, 0x8F, 0x9F, 0xA0, 0xBF, 0xC2, 0xC3, 0xDF, 0xE0, 0xE1, 0xED, 0xEE, 0xEF,
                                 0xF0, 0xF1, 0xF4, 0xF5, 0xFF, 0xC0, 0xC1]
        for _ in 0..<5_000 {
            let length = Int(generator.next() % 12)
            let content = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            let expected = String(validating: content, as: UTF8.self)
            let parsed = try? JSONParser.parse([0x22] + content + [0x22], maxDepth: 1)
            #expect(parsed == expected.map(JSONValue.string), "bytes \(content)")
        }
    }
}
