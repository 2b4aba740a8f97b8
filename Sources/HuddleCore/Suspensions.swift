import HuddleProtocol

/// One account's suspension by the operator: why, since when, and until when (nil: until lifted).
public struct Suspension: Sendable, Equatable {
    public var reason: String
    public var until: Int64?
    public var time: Int64

    /// Whether it still holds at `time`: one that ran out needs no command to end.
    public func holds(at time: Int64) -> Bool { until.map { time < $0 } ?? true }
}

/// The accounts the operator suspended (durable; protocol.md, "Moderation"). A suspended user
/// cannot sign in; their live connections were closed when it began. The record stays until
/// the operator lifts it or the account goes (`erase`), so an expired one costs a lookup only.
public struct Suspensions: Sendable, Equatable {
    private var byUser: [Username: Suspension] = [:]

    public init() {}

    public subscript(user: Username) -> Suspension? { byUser[user] }

    /// The suspension of `user` holding at `time`, if any.
    public func active(_ user: Username, at time: Int64) -> Suspension? {
        byUser[user].flatMap { $0.holds(at: time) ? $0 : nil }
    }

    public var count: Int { byUser.count }

    mutating func suspend(_ user: Username, _ suspension: Suspension) { byUser[user] = suspension }

    mutating func lift(_ user: Username) { byUser[user] = nil }

    /// Forgets the user's suspension (account deletion).
    mutating func erase(_ user: Username) { byUser[user] = nil }

    /// What an export of `user` holds: their suspension, if any, as the operator set it.
    public func exported(for user: Username) -> JSONValue {
        guard let suspension = byUser[user] else { return .null }
        return .object([
            ("reason", .string(suspension.reason)), ("since", .integer(suspension.time)),
            ("until", suspension.until.map { JSONValue.integer($0) } ?? .null),
        ])
    }
}

/// Sorted by username, so equal states encode to equal bytes.
extension Suspensions: PersistedValue {
    var persisted: JSONValue {
        .array(byUser.keys.sorted().map { user in
            let suspension = byUser[user]!
            return .record([
                ("user", user.persisted), ("reason", suspension.reason.persisted), ("until", suspension.until?.persisted),
                ("time", suspension.time.persisted),
            ])
        })
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        guard case .array(let entries) = persisted else { throw RecordDecodingError("Suspensions must be a list") }
        for entry in entries {
            let f = try PersistedFields(entry, "Suspension")
            let user: Username = try f("user")
            guard byUser[user] == nil else { throw RecordDecodingError("a suspension of \(user) appears twice") }
            byUser[user] = Suspension(reason: try f("reason"), until: try f.optional("until"), time: try f("time"))
        }
    }
}
