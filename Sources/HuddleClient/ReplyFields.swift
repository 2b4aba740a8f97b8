import HuddleProtocol

/// Reading the fields of a reply's `result` (or an event) for the typed API: a field that is
/// missing or of the wrong type is `HuddleClientError.invalidReply` naming it, so a server that
/// breaks protocol.md is reported rather than read as zeros.
extension JSONValue {
    func requiredString(_ key: String) throws(HuddleClientError) -> String {
        guard let value = self[key]?.stringValue else { throw .invalidReply("`\(key)` is missing or not a string") }
        return value
    }

    func optionalString(_ key: String) throws(HuddleClientError) -> String? {
        guard let value = self[key], value != .null else { return nil }
        guard let string = value.stringValue else { throw .invalidReply("`\(key)` is not a string") }
        return string
    }

    func requiredBool(_ key: String) throws(HuddleClientError) -> Bool {
        guard let value = self[key]?.boolValue else { throw .invalidReply("`\(key)` is missing or not a boolean") }
        return value
    }

    func optionalBool(_ key: String) throws(HuddleClientError) -> Bool? {
        guard let value = self[key], value != .null else { return nil }
        guard let bool = value.boolValue else { throw .invalidReply("`\(key)` is not a boolean") }
        return bool
    }

    func requiredUInt64(_ key: String) throws(HuddleClientError) -> UInt64 {
        guard let value = self[key]?.uint64Value else { throw .invalidReply("`\(key)` is missing or not a non-negative integer") }
        return value
    }

    func optionalUInt64(_ key: String) throws(HuddleClientError) -> UInt64? {
        guard let value = self[key], value != .null else { return nil }
        guard let number = value.uint64Value else { throw .invalidReply("`\(key)` is not a non-negative integer") }
        return number
    }

    func requiredInt64(_ key: String) throws(HuddleClientError) -> Int64 {
        guard let value = self[key]?.int64Value else { throw .invalidReply("`\(key)` is missing or not an integer") }
        return value
    }

    func requiredInt(_ key: String) throws(HuddleClientError) -> Int {
        guard let value = self[key]?.int64Value, let int = Int(exactly: value) else {
            throw .invalidReply("`\(key)` is missing or not an integer")
        }
        return int
    }

    func requiredArray(_ key: String) throws(HuddleClientError) -> [JSONValue] {
        guard case .array(let elements)? = self[key] else { throw .invalidReply("`\(key)` is missing or not an array") }
        return elements
    }

    func requiredObject(_ key: String) throws(HuddleClientError) -> JSONValue {
        guard let value = self[key], case .object = value else { throw .invalidReply("`\(key)` is missing or not an object") }
        return value
    }

    /// An array of strings, e.g. a list of usernames.
    func requiredStrings(_ key: String) throws(HuddleClientError) -> [String] {
        var strings: [String] = []
        for element in try requiredArray(key) {
            guard let string = element.stringValue else { throw .invalidReply("`\(key)` holds a non-string") }
            strings.append(string)
        }
        return strings
    }
}
