/// A stream entry ID, `MILLISECONDS-SEQUENCE`, ordered as Redis orders them.
public struct RedisStreamID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var milliseconds: UInt64
    public var sequence: UInt64

    public init(milliseconds: UInt64, sequence: UInt64) {
        self.milliseconds = milliseconds
        self.sequence = sequence
    }

    /// Parses `123-4` (and `123`, which Redis reads as `123-0`); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let milliseconds = UInt64(parts[0]) else { return nil }
        guard let sequence = parts.count == 2 ? UInt64(parts[1]) : 0 else { return nil }
        self.init(milliseconds: milliseconds, sequence: sequence)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }

    public var description: String { "\(milliseconds)-\(sequence)" }
}

/// One entry of a stream: its ID and its field/value pairs in the order they were added.
public struct RedisStreamEntry: Sendable, Equatable {
    public var id: RedisStreamID
    public var fields: [Field]

    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: [UInt8]

        public init(_ name: String, _ value: [UInt8]) {
            self.name = name
            self.value = value
        }
    }

    public init(id: RedisStreamID, fields: [Field]) {
        self.id = id
        self.fields = fields
    }

    public subscript(name: String) -> [UInt8]? {
        fields.first { $0.name == name }?.value
    }

    /// Reads XRANGE's entry shape, `[id, [field, value, …]]`.
    init?(reply: RedisReply) {
        guard let parts = reply.elements, parts.count == 2, let id = parts[0].string.flatMap(RedisStreamID.init),
              let flat = parts[1].elements, flat.count % 2 == 0 else { return nil }
        var fields: [Field] = []
        for index in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[index].string, case .bulk(let value) = flat[index + 1] else { return nil }
            fields.append(Field(name, value))
        }
        self.init(id: id, fields: fields)
    }
}
