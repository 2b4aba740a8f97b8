/// A JSON value (RFC 8259) as the wire protocol sees it.
///
/// Numbers keep the literal as written: the protocol's numbers are offsets, limits and
/// milliseconds that must not pass through a `Double`, and a publication's `data` must go back
/// out exactly as it came in.
///
/// Not `indirect`: arrays and objects already hold their elements on the heap, and boxing every
/// string and number as well made parsing a request about 15% slower, in allocations.
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    /// The literal as written; the parser validated it against RFC 8259's grammar.
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order; duplicate keys are kept (lookup finds the first).
    case object([(String, JSONValue)])
    /// Already-serialized JSON, written out verbatim (for example a stored publication's `data`).
    /// `JSONParser.parse` never produces it.
    case raw(String)

    /// An integer number, written in decimal.
    public static func integer<Integer: BinaryInteger>(_ value: Integer) -> JSONValue {
        .number(String(value))
    }

    /// The first member named `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for (name, value) in members where sameCodeUnits(name, key) {
            return value
        }
        return nil
    }

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// The number as an `Int64` when it is written as an integer (no fraction, no exponent)
    /// that fits; `1.0` and `1e2` are nil on purpose: the protocol's integers are written plainly.
    public var int64Value: Int64? {
        guard case .number(let literal) = self else { return nil }
        var utf8 = Substring(literal).utf8
        let negative = utf8.first == UInt8(ascii: "-")
        if negative { utf8 = utf8.dropFirst() }
        guard let magnitude = Self.decimalMagnitude(utf8) else { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }

    /// The number as a `UInt64` when it is written as a non-negative integer that fits
    /// (offsets use the whole unsigned range). `-0` is 0.
    public var uint64Value: UInt64? {
        guard case .number(let literal) = self else { return nil }
        var utf8 = Substring(literal).utf8
        if utf8.first == UInt8(ascii: "-") {
            utf8 = utf8.dropFirst()
            return utf8.elementsEqual([UInt8(ascii: "0")]) ? 0 : nil
        }
        return Self.decimalMagnitude(utf8)
    }

    /// The value of a run of ASCII digits, nil if empty, not all digits, or over `UInt64.max`.
    private static func decimalMagnitude(_ digits: Substring.UTF8View) -> UInt64? {
        guard !digits.isEmpty else { return nil }
        var magnitude: UInt64 = 0
        for byte in digits {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { return nil }
            magnitude = sum
        }
        return magnitude
    }
}

/// Structural equality, as JSON sees it rather than as `String` does: strings are equal when
/// their code units are (`String`'s `==` would call "é" and "e\u{301}" equal, which two JSON
/// documents are not). Object members compare in order, so `{"a":1,"b":2}` and `{"b":2,"a":1}`
/// differ, as their serializations do. Numbers compare as literals (`1.0` is not `1`).
extension JSONValue: Equatable {
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return sameCodeUnits(a, b)
        case (.string(let a), .string(let b)): return sameCodeUnits(a, b)
        case (.raw(let a), .raw(let b)): return sameCodeUnits(a, b)
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { sameCodeUnits($0.0, $1.0) && $0.1 == $1.1 }
        default: return false
        }
    }
}
