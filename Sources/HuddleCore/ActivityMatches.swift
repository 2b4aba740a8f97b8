import HuddleProtocol

/// The matches in force (durable): pairs of friends and the activity they matched on, with
/// when the match began. Kept rather than derived so that a match is told once — not again
/// while both stay on, across restarts too — and so that its `since` survives.
///
/// Stored on both sides, like friendships, so a user's matches are one lookup. A pair holds at
/// most one match per listed activity, so a user has at most friends × activities.
/// Coded as a list of `{users: [a, b], activity, since}` with a < b, sorted.
public struct ActivityMatches: Sendable, Equatable {
    private var byUser: [Username: [Username: [String: Int64]]] = [:]
    public private(set) var count = 0

    public init() {}

    /// The activities the two matched on, each with when that match began.
    public func activities(between user: Username, and partner: Username) -> [String: Int64] {
        byUser[user]?[partner] ?? [:]
    }

    /// Everyone the user has a match with.
    func partners(of user: Username) -> Dictionary<Username, [String: Int64]>.Keys {
        (byUser[user] ?? [:]).keys
    }

    mutating func start(_ first: Username, _ second: Username, activity: String, since: Int64) {
        if byUser[first, default: [:]][second, default: [:]].updateValue(since, forKey: activity) == nil { count += 1 }
        byUser[second, default: [:]][first, default: [:]][activity] = since
    }

    mutating func end(_ first: Username, _ second: Username, activity: String) {
        guard byUser[first]?[second]?.removeValue(forKey: activity) != nil else { return }
        count -= 1
        byUser[second]?[first]?.removeValue(forKey: activity)
        for (user, partner) in [(first, second), (second, first)] {
            if byUser[user]?[partner]?.isEmpty == true { byUser[user]?[partner] = nil }
            if byUser[user]?.isEmpty == true { byUser[user] = nil }
        }
    }

    /// Account deletion: every match of the user.
    mutating func erase(_ user: Username) {
        for (partner, activities) in byUser[user] ?? [:] {
            for activity in activities.keys { end(user, partner, activity: activity) }
        }
    }
}

/// `{users: [a, b], activity, since}` objects, a < b, by a, b, then activity.
extension ActivityMatches: PersistedValue {
    var persisted: JSONValue {
        var entries: [JSONValue] = []
        for user in byUser.keys.sorted() {
            let partners = byUser[user]!
            for partner in partners.keys.sorted() where user < partner {
                let activities = partners[partner]!
                for activity in activities.keys.sorted() {
                    entries.append(.record([("users", [user, partner].persisted), ("activity", activity.persisted), ("since", activities[activity]!.persisted)]))
                }
            }
        }
        return .array(entries)
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for f in try PersistedFields.objects(persisted, "ActivityMatchEntry") {
            let users: [Username] = try f("users")
            let activity: String = try f("activity")
            guard users.count == 2, users[0] < users[1], activities(between: users[0], and: users[1])[activity] == nil else {
                throw RecordDecodingError("bad or repeated match \(users) on \(activity)")
            }
            start(users[0], users[1], activity: activity, since: try f("since"))
        }
    }
}
