import HuddleProtocol

/// A value of the log or a snapshot, written and read by hand (Sources/HuddleStore/README.md,
/// "Records"): every key is spelled here, so renaming a Swift property cannot change what is on
/// disk. The shapes are those the first release's synthesized Codable wrote (format 0), which
/// is why one reader reads both formats: a struct is an object of its fields, an enum case an
/// object with one member named after the case, `nil` a missing member.
protocol PersistedValue {
    var persisted: JSONValue { get }
    init(persisted: JSONValue) throws(RecordDecodingError)
}

/// A record or snapshot this version cannot read; `path` says where in it.
public struct RecordDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    init(_ message: String) { self.message = message }

    public var description: String { message }
}

extension JSONValue {
    /// An object of `members`, absent (nil) ones left out, keys in byte order: equal values give
    /// equal bytes.
    static func record(_ members: [(String, JSONValue?)]) -> JSONValue {
        var present: [(String, JSONValue)] = []
        present.reserveCapacity(members.count)
        for (key, value) in members {
            if let value { present.append((key, value)) }
        }
        present.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        return .object(present)
    }

    /// An enum case: `{"name": {fields}}`.
    static func variant(_ name: String, _ members: [(String, JSONValue?)] = []) -> JSONValue {
        .object([(name, .record(members))])
    }
}

/// The members of one persisted object, read by key.
struct PersistedFields {
    let members: [(String, JSONValue)]
    let type: StaticString

    init(_ value: JSONValue, _ type: StaticString) throws(RecordDecodingError) {
        guard case .object(let members) = value else { throw RecordDecodingError("\(type) is not an object") }
        self.members = members
        self.type = type
    }

    func member(_ key: String) -> JSONValue? {
        for (name, value) in members where name == key { return value }
        return nil
    }

    /// The member `key`, which must be there.
    func callAsFunction<Value: PersistedValue>(_ key: String) throws(RecordDecodingError) -> Value {
        guard let value = member(key) else { throw RecordDecodingError("\(type) has no \(key)") }
        do {
            return try Value(persisted: value)
        } catch {
            throw RecordDecodingError("\(type).\(key): \(error.message)")
        }
    }

    /// The member `key`, nil when it is missing or null.
    func optional<Value: PersistedValue>(_ key: String) throws(RecordDecodingError) -> Value? {
        guard let value = member(key) else { return nil }
        if case .null = value { return nil }
        do {
            return try Value(persisted: value)
        } catch {
            throw RecordDecodingError("\(type).\(key): \(error.message)")
        }
    }
}

extension PersistedFields {
    /// The elements of an array of objects (`type`), each read by key.
    static func objects(_ value: JSONValue?, _ type: StaticString) throws(RecordDecodingError) -> [PersistedFields] {
        guard case .array(let elements)? = value else { throw RecordDecodingError("not an array of \(type)") }
        var objects: [PersistedFields] = []
        objects.reserveCapacity(elements.count)
        for element in elements { objects.append(try PersistedFields(element, type)) }
        return objects
    }

    /// The member `key`, an array of objects (`type`).
    func objects(_ key: String, _ type: StaticString) throws(RecordDecodingError) -> [PersistedFields] {
        try Self.objects(member(key), type)
    }
}

/// One enum case: its name and its fields.
struct PersistedVariant {
    let name: String
    let fields: PersistedFields

    init(_ value: JSONValue, _ type: StaticString) throws(RecordDecodingError) {
        guard case .object(let members) = value, members.count == 1 else { throw RecordDecodingError("\(type) is not an object of one case") }
        name = members[0].0
        fields = try PersistedFields(members[0].1, type)
    }

    func unknown() -> RecordDecodingError {
        RecordDecodingError("\(fields.type) has no case \(name)")
    }
}

extension String: PersistedValue {
    var persisted: JSONValue { .string(self) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        guard case .string(let string) = persisted else { throw RecordDecodingError("not a string") }
        self = string
    }
}

extension Bool: PersistedValue {
    var persisted: JSONValue { .bool(self) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        guard case .bool(let bool) = persisted else { throw RecordDecodingError("not a bool") }
        self = bool
    }
}

extension Int64: PersistedValue {
    var persisted: JSONValue { .integer(self) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        guard let value = persisted.int64Value else { throw RecordDecodingError("not a 64-bit integer") }
        self = value
    }
}

extension UInt64: PersistedValue {
    var persisted: JSONValue { .integer(self) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        guard let value = persisted.uint64Value else { throw RecordDecodingError("not an unsigned 64-bit integer") }
        self = value
    }
}

extension Int: PersistedValue {
    var persisted: JSONValue { .integer(self) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        guard let value = persisted.int64Value, let int = Int(exactly: value) else { throw RecordDecodingError("not an integer") }
        self = int
    }
}

/// Bytes (salts, hashes) are arrays of numbers, as format 0 wrote them.
extension UInt8: PersistedValue {
    var persisted: JSONValue { .integer(self) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        guard let value = persisted.uint64Value, let byte = UInt8(exactly: value) else { throw RecordDecodingError("not a byte") }
        self = byte
    }
}

/// The shortest literal that reads back as the same value; the core keeps no infinities or NaNs
/// (coordinates and radii are checked), and one would not read back.
extension Double: PersistedValue {
    var persisted: JSONValue { .double(self) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        guard let value = persisted.doubleValue, value.isFinite else { throw RecordDecodingError("not a finite number") }
        self = value
    }
}

extension Array: PersistedValue where Element: PersistedValue {
    var persisted: JSONValue { .array(map(\.persisted)) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        guard case .array(let elements) = persisted else { throw RecordDecodingError("not an array") }
        self = []
        reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do {
                append(try Element(persisted: element))
            } catch {
                throw RecordDecodingError("[\(index)]: \(error.message)")
            }
        }
    }
}
