import HuddleWebSocket
import Testing

@Suite struct UTF8ValidatorTests {
    enum Expectation: Sendable { case valid, invalid, truncated }

    struct Sample: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var expectation: Expectation
        var testDescription: String { name }
    }

    static let samples: [Sample] = [
        Sample(name: "empty", bytes: [], expectation: .valid),
        Sample(name: "ASCII", bytes: Array("Hello, world".utf8), expectation: .valid),
        Sample(name: "NUL and DEL", bytes: [0x00, 0x7F], expectation: .valid),
        Sample(
            name: "κόσμε", bytes: [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5],
            expectation: .valid),
        Sample(name: "U+0080", bytes: [0xC2, 0x80], expectation: .valid),
        Sample(name: "U+07FF", bytes: [0xDF, 0xBF], expectation: .valid),
        Sample(name: "U+0800", bytes: [0xE0, 0xA0, 0x80], expectation: .valid),
        Sample(name: "U+D7FF", bytes: [0xED, 0x9F, 0xBF], expectation: .valid),
        Sample(name: "U+E000", bytes: [0xEE, 0x80, 0x80], expectation: .valid),
        Sample(name: "U+FFFD", bytes: [0xEF, 0xBF, 0xBD], expectation: .valid),
        Sample(name: "U+FFFF", bytes: [0xEF, 0xBF, 0xBF], expectation: .valid),
        Sample(name: "U+10000", bytes: [0xF0, 0x90, 0x80, 0x80], expectation: .valid),
        Sample(name: "U+1F600", bytes: [0xF0, 0x9F, 0x98, 0x80], expectation: .valid),
        Sample(name: "U+10FFFF", bytes: [0xF4, 0x8F, 0xBF, 0xBF], expectation: .valid),

        Sample(name: "lone continuation 80", bytes: [0x80], expectation: .invalid),
        Sample(name: "lone continuation BF", bytes: [0xBF], expectation: .invalid),
        Sample(name: "overlong NUL C0 80", bytes: [0xC0, 0x80], expectation: .invalid),
        Sample(name: "overlong slash C0 AF", bytes: [0xC0, 0xAF], expectation: .invalid),
        Sample(name: "overlong C1 BF", bytes: [0xC1, 0xBF], expectation: .invalid),
        Sample(name: "overlong 3-byte E0 80 80", bytes: [0xE0, 0x80, 0x80], expectation: .invalid),
        Sample(name: "overlong 3-byte E0 9F BF", bytes: [0xE0, 0x9F, 0xBF], expectation: .invalid),
        Sample(name: "overlong 4-byte F0 80 80 80", bytes: [0xF0, 0x80, 0x80, 0x80], expectation: .invalid),
        Sample(name: "overlong 4-byte F0 8F BF BF", bytes: [0xF0, 0x8F, 0xBF, 0xBF], expectation: .invalid),
        Sample(name: "surrogate U+D800", bytes: [0xED, 0xA0, 0x80], expectation: .invalid),
        Sample(name: "surrogate U+DB7F", bytes: [0xED, 0xAD, 0xBF], expectation: .invalid),
        Sample(name: "surrogate U+DC00", bytes: [0xED, 0xB0, 0x80], expectation: .invalid),
        Sample(name: "surrogate U+DFFF", bytes: [0xED, 0xBF, 0xBF], expectation: .invalid),
        Sample(name: "CESU-8 surrogate pair", bytes: [0xED, 0xA0, 0xBD, 0xED, 0xB2, 0xA9], expectation: .invalid),
        Sample(name: "U+110000", bytes: [0xF4, 0x90, 0x80, 0x80], expectation: .invalid),
        Sample(name: "F5 lead", bytes: [0xF5, 0x80, 0x80, 0x80], expectation: .invalid),
        Sample(name: "F7 lead", bytes: [0xF7, 0xBF, 0xBF, 0xBF], expectation: .invalid),
        Sample(name: "5-byte form", bytes: [0xF8, 0x88, 0x80, 0x80, 0x80], expectation: .invalid),
        Sample(name: "6-byte form", bytes: [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80], expectation: .invalid),
        Sample(name: "FE", bytes: [0xFE], expectation: .invalid),
        Sample(name: "FF", bytes: [0xFF], expectation: .invalid),
        Sample(name: "2-byte lead then ASCII", bytes: [0xC2, 0x41], expectation: .invalid),
        Sample(name: "3-byte lead, continuation, ASCII", bytes: [0xE1, 0x80, 0x41], expectation: .invalid),
        Sample(name: "4-byte lead, 2 continuations, ASCII", bytes: [0xF0, 0x90, 0x80, 0x41], expectation: .invalid),
        Sample(name: "two leads", bytes: [0xC2, 0xC2], expectation: .invalid),

        Sample(name: "truncated 2-byte", bytes: [0xC2], expectation: .truncated),
        Sample(name: "truncated 3-byte after 1", bytes: [0xE2], expectation: .truncated),
        Sample(name: "truncated 3-byte after 2", bytes: [0xE0, 0xA0], expectation: .truncated),
        Sample(name: "truncated 4-byte after 3", bytes: [0xF0, 0x90, 0x80], expectation: .truncated),
        Sample(name: "truncated U+10FFFF", bytes: [0xF4, 0x8F, 0xBF], expectation: .truncated),
        Sample(name: "ASCII then truncated €", bytes: [0x61, 0x62, 0x63, 0xE2, 0x82], expectation: .truncated),
    ]

    private static func feed(_ validator: inout UTF8Validator, _ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBytes { validator.validate($0) }
    }

    /// Feeds `pieces` in order; returns whether every call passed and whether it ended between characters.
    private static func outcome(of pieces: [ArraySlice<UInt8>]) -> Expectation {
        var validator = UTF8Validator()
        var passed = true
        for piece in pieces {
            passed = feed(&validator, piece) && passed
        }
        if !passed { return .invalid }
        return validator.isAtCharacterBoundary ? .valid : .truncated
    }

    @Test(arguments: samples)
    func sampleSplitAtEveryPosition(sample: Sample) {
        let bytes = sample.bytes
        #expect(Self.outcome(of: [bytes[...]]) == sample.expectation)
        for split in 0...bytes.count {
            #expect(Self.outcome(of: [bytes[..<split], bytes[split...]]) == sample.expectation, "split at \(split)")
        }
        #expect(Self.outcome(of: bytes.indices.map { bytes[$0...$0] }) == sample.expectation, "one byte at a time")
    }

    /// The same samples behind a run of ASCII long enough for the 8-byte fast path, at every
    /// alignment, so the switch between fast path and automaton is covered.
    @Test(arguments: samples)
    func sampleAfterASCIIRunAtEveryAlignment(sample: Sample) {
        for prefixLength in 0..<17 {
            var bytes = [UInt8](repeating: 0x61, count: prefixLength) + sample.bytes
            if sample.expectation != .truncated {
                bytes += [UInt8](repeating: 0x7A, count: 9)
            }
            #expect(Self.outcome(of: [bytes[...]]) == sample.expectation, "after \(prefixLength) ASCII bytes")
            for split in stride(from: 0, through: bytes.count, by: 3) {
                #expect(
                    Self.outcome(of: [bytes[..<split], bytes[split...]]) == sample.expectation,
                    "after \(prefixLength) ASCII bytes, split at \(split)")
            }
        }
    }

    @Test func invalidByteAnywhereInALongASCIIRunIsFound() {
        for position in 0..<64 {
            var bytes = [UInt8](repeating: 0x41, count: 64)
            bytes[position] = 0x80
            #expect(Self.outcome(of: [bytes[...]]) == .invalid, "0x80 at \(position)")
        }
    }

    @Test func multiByteCharacterAnywhereInALongASCIIRunIsValid() {
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        for position in 0...61 {
            var bytes = [UInt8](repeating: 0x41, count: 61)
            bytes.insert(contentsOf: euro, at: position)
            #expect(Self.outcome(of: [bytes[...]]) == .valid, "€ at \(position)")
        }
    }

    /// Non-ASCII runs go through the automaton in blocks; a cut or a bad byte anywhere in one
    /// must still count.
    @Test func longMultiByteTextCutOrCorruptedAnywhere() {
        let bytes = Array(String(repeating: "κόσμε 你好😀", count: 4).utf8)
        for cut in 0...bytes.count {
            let isBoundary = cut == bytes.count || bytes[cut] & 0xC0 != 0x80
            #expect(Self.outcome(of: [bytes[..<cut]]) == (isBoundary ? .valid : .truncated), "cut at \(cut)")
        }
        for position in bytes.indices {
            var corrupted = bytes
            corrupted[position] = 0xFF
            #expect(Self.outcome(of: [corrupted[...]]) == .invalid, "0xFF at \(position)")
        }
    }

    @Test func boundaryIsFalseWhileMidCharacter() {
        var validator = UTF8Validator()
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        #expect(validator.isAtCharacterBoundary)
        #expect(Self.feed(&validator, euro[0...0]))
        #expect(!validator.isAtCharacterBoundary)
        #expect(Self.feed(&validator, euro[1...1]))
        #expect(!validator.isAtCharacterBoundary)
        #expect(Self.feed(&validator, euro[2...2]))
        #expect(validator.isAtCharacterBoundary)
    }

    @Test func rejectionIsStickyUntilReset() {
        var validator = UTF8Validator()
        let ascii = Array("ok".utf8)
        #expect(!Self.feed(&validator, [0xFF]))
        #expect(!Self.feed(&validator, ascii[...]))
        #expect(!validator.isAtCharacterBoundary)
        validator.reset()
        #expect(Self.feed(&validator, ascii[...]))
        #expect(validator.isAtCharacterBoundary)
    }

    /// Every 2-byte sequence, and every 3- and 4-byte sequence over the bytes where the rules
    /// change, judged the same as the standard library's validating decoder.
    @Test func agreesWithStandardLibrary() {
        let edges: [UInt8] = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]
        var sequences: [[UInt8]] = []
        for first in UInt8.min...UInt8.max {
            for second in UInt8.min...UInt8.max {
                sequences.append([first, second])
                if first >= 0xC0 {
                    for third in edges { sequences.append([first, second, third]) }
                }
                if first >= 0xF0 && first <= 0xF7 {
                    for third in edges {
                        for fourth in edges { sequences.append([first, second, third, fourth]) }
                    }
                }
            }
        }
        var disagreements: [[UInt8]] = []
        for bytes in sequences {
            let expected = String(validating: bytes, as: UTF8.self) != nil
            if (Self.outcome(of: [bytes[...]]) == .valid) != expected { disagreements.append(bytes) }
        }
        #expect(disagreements.isEmpty, "first: \(disagreements.prefix(5))")
    }
}
