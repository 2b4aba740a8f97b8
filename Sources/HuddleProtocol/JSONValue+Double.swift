extension JSONValue {
    /// Any number as the nearest `Double` (coordinates and distances, where a `Double` is what
    /// is meant). The parser validated the literal, and RFC 8259's number grammar is a subset
    /// of what `Double(_:)` reads. A literal beyond `Double`'s range is an infinity.
    public var doubleValue: Double? {
        guard case .number(let literal) = self else { return nil }
        return Double(literal)
    }

    /// A `Double` as a JSON number: the shortest literal that reads back as the same value
    /// (Swift's `description`, valid JSON for finite values: `1.0`, `1e-05`). JSON has no
    /// literal for an infinity or NaN: those become `null` rather than invalid JSON.
    public static func double(_ value: Double) -> JSONValue {
        value.isFinite ? .number(value.description) : .null
    }
}
