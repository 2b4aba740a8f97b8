import HuddleProtocol
import Testing

@Suite struct JSONValueTests {
    @Test func subscriptFindsTheFirstMemberOfAnObjectOnly() {
        let object: JSONValue = .object([("a", .number("1")), ("b", .null), ("a", .number("2"))])
        #expect(object["a"] == .number("1"))
        #expect(object["b"] == .null)
        #expect(object["c"] == nil)
        #expect(JSONValue.array([.string("a")])["a"] == nil)
        #expect(JSONValue.string("a")["a"] == nil)
    }

    @Test func typedAccessorsAnswerOnlyForTheirKind() {
        #expect(JSONValue.string("x").stringValue == "x")
        #expect(JSONValue.number("1").stringValue == nil)
        #expect(JSONValue.bool(false).boolValue == false)
        #expect(JSONValue.null.boolValue == nil)
        #expect(JSONValue.string("1").int64Value == nil)
        #expect(JSONValue.raw("1").int64Value == nil)
    }

    @Test(arguments: [
        ("0", Int64(0)), ("-0", 0), ("42", 42), ("-42", -42),
        ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min),
    ] as [(String, Int64)])
    func int64ValueReadsPlainIntegers(literal: String, expected: Int64) {
        #expect(JSONValue.number(literal).int64Value == expected)
    }

    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "1.0", "1e2", "1E0", "-", "", "99999999999999999999999"])
    func int64ValueRefusesWhatIsNotAPlainInt64(literal: String) {
        #expect(JSONValue.number(literal).int64Value == nil)
    }

    @Test func uint64ValueCoversTheUnsignedRange() {
        #expect(JSONValue.number("18446744073709551615").uint64Value == UInt64.max)
        #expect(JSONValue.number("-0").uint64Value == 0)
        #expect(JSONValue.number("7").uint64Value == 7)
        #expect(JSONValue.number("18446744073709551616").uint64Value == nil)
        #expect(JSONValue.number("-1").uint64Value == nil)
        #expect(JSONValue.number("-00").uint64Value == nil)
        #expect(JSONValue.number("2.0").uint64Value == nil)
        #expect(JSONValue.null.uint64Value == nil)
    }

    @Test func integerWritesDecimal() {
        #expect(JSONValue.integer(-5) == .number("-5"))
        #expect(JSONValue.integer(UInt64.max) == .number("18446744073709551615"))
    }

    @Test func equalityIsStructuralAndOrdered() {
        #expect(JSONValue.object([("a", .null), ("b", .null)]) == .object([("a", .null), ("b", .null)]))
        #expect(JSONValue.object([("a", .null), ("b", .null)]) != .object([("b", .null), ("a", .null)]))
        #expect(JSONValue.object([("a", .null)]) != .object([("a", .null), ("a", .null)]))
        #expect(JSONValue.array([.number("1")]) != .array([.number("1.0")]))
        #expect(JSONValue.string("1") != .number("1"))
        #expect(JSONValue.raw("1") != .number("1"))
    }

    @Test func stringsCompareByCodeUnitsNotCanonicalEquivalence() {
        let precomposed = "\u{E9}"
        let decomposed = "e\u{301}"
        #expect(precomposed == decomposed, "Swift's String calls them equal")
        #expect(JSONValue.string(precomposed) != .string(decomposed))
        #expect(JSONValue.object([(precomposed, .null)]) != .object([(decomposed, .null)]))
        #expect(JSONValue.object([(decomposed, .null)])[precomposed] == nil)
    }
}
