import HuddleProtocol

/// Usernames of deleted accounts (durable), each with when it was deleted: nobody may sign up
/// with one for `period` after, so friends and old messages' readers are not fooled by a
/// stranger taking a deleted friend's name at once (protocol.md, "Deletion and retention").
///
/// Bounded: each deletion first forgets the names whose quarantine ended by its time, so the
/// set holds at most the deletions of one period. The period is a constant, not configuration:
/// every core replaying a log must keep the same names. Coded as a list sorted by username.
public struct UsernameQuarantine: Sendable, Equatable {
    public static let period: Int64 = 30 * 24 * 60 * 60 * 1000

    private var deletedAt: [Username: Int64] = [:]

    public init() {}

    public var count: Int { deletedAt.count }

    /// Whether `user` was deleted less than `period` before `time`.
    public func holds(_ user: Username, at time: Int64) -> Bool {
        guard let deleted = deletedAt[user] else { return false }
        return time - deleted < Self.period
    }

    /// Until when the name is held; nil when it is free.
    public func heldUntil(_ user: Username, at time: Int64) -> Int64? {
        holds(user, at: time) ? deletedAt[user]! + Self.period : nil
    }

    mutating func hold(_ user: Username, at time: Int64) {
        deletedAt = deletedAt.filter { time - $0.value < Self.period }
        deletedAt[user] = time
    }
}

/// `{user, deletedAt}` objects by user.
extension UsernameQuarantine: PersistedValue {
    var persisted: JSONValue {
        .array(deletedAt.keys.sorted().map { .record([("user", $0.persisted), ("deletedAt", deletedAt[$0]!.persisted)]) })
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for f in try PersistedFields.objects(persisted, "QuarantinedUsername") {
            let user: Username = try f("user")
            guard deletedAt.updateValue(try f("deletedAt"), forKey: user) == nil else {
                throw RecordDecodingError("quarantined username \(user) appears twice")
            }
        }
    }
}
