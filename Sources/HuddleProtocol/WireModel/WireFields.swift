/// A server message that does not have the shape protocol.md gives it: `reason` names the
/// field, so a server that breaks the protocol is reported rather than read as zeros.
public struct WireFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// Reading the fields of a reply's `result` or an event for the typed wire model: a field that
/// is missing or of the wrong type throws `WireFormatError` naming it.
extension JSONValue {
    public func requiredString(_ key: String) throws(WireFormatError) -> String {
        guard let value = self[key]?.stringValue else { throw WireFormatError("`\(key)` is missing or not a string") }
        return value
    }

    public func optionalString(_ key: String) throws(WireFormatError) -> String? {
        guard let value = self[key], value != .null else { return nil }
        guard let string = value.stringValue else { throw WireFormatError("`\(key)` is not a string") }
        return string
    }

    public func requiredBool(_ key: String) throws(WireFormatError) -> Bool {
        guard let value = self[key]?.boolValue else { throw WireFormatError("`\(key)` is missing or not a boolean") }
        return value
    }

    public func optionalBool(_ key: String) throws(WireFormatError) -> Bool? {
        guard let value = self[key], value != .null else { return nil }
        guard let bool = value.boolValue else { throw WireFormatError("`\(key)` is not a boolean") }
        return bool
    }

    public func requiredUInt64(_ key: String) throws(WireFormatError) -> UInt64 {
        guard let value = self[key]?.uint64Value else { throw WireFormatError("`\(key)` is missing or not a non-negative integer") }
        return value
    }

    public func optionalUInt64(_ key: String) throws(WireFormatError) -> UInt64? {
        guard let value = self[key], value != .null else { return nil }
        guard let number = value.uint64Value else { throw WireFormatError("`\(key)` is not a non-negative integer") }
        return number
    }

    public func requiredInt64(_ key: String) throws(WireFormatError) -> Int64 {
        guard let value = self[key]?.int64Value else { throw WireFormatError("`\(key)` is missing or not an integer") }
        return value
    }

    public func optionalInt64(_ key: String) throws(WireFormatError) -> Int64? {
        guard let value = self[key], value != .null else { return nil }
        guard let number = value.int64Value else { throw WireFormatError("`\(key)` is not an integer") }
        return number
    }

    public func requiredInt(_ key: String) throws(WireFormatError) -> Int {
        guard let value = self[key]?.int64Value, let int = Int(exactly: value) else {
            throw WireFormatError("`\(key)` is missing or not an integer")
        }
        return int
    }

    public func requiredArray(_ key: String) throws(WireFormatError) -> [JSONValue] {
        guard case .array(let elements)? = self[key] else { throw WireFormatError("`\(key)` is missing or not an array") }
        return elements
    }

    public func requiredObject(_ key: String) throws(WireFormatError) -> JSONValue {
        guard let value = self[key], case .object = value else { throw WireFormatError("`\(key)` is missing or not an object") }
        return value
    }

    /// An array of strings, e.g. a list of usernames.
    public func requiredStrings(_ key: String) throws(WireFormatError) -> [String] {
        var strings: [String] = []
        for element in try requiredArray(key) {
            guard let string = element.stringValue else { throw WireFormatError("`\(key)` holds a non-string") }
            strings.append(string)
        }
        return strings
    }
}

extension JSONValue {
    public func requiredDouble(_ key: String) throws(WireFormatError) -> Double {
        guard let value = self[key]?.doubleValue else { throw WireFormatError("`\(key)` is missing or not a number") }
        return value
    }

    /// `self[key]` decoded by `decode` as an array of objects.
    public func requiredList<Element>(_ key: String, _ decode: (JSONValue) throws(WireFormatError) -> Element) throws(WireFormatError) -> [Element] {
        var list: [Element] = []
        for element in try requiredArray(key) { list.append(try decode(element)) }
        return list
    }

    /// `array` of strings as a JSON array.
    public static func strings(_ array: [String]) -> JSONValue { .array(array.map(JSONValue.string)) }
}
