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
}

extension ActivityMatches: Codable {
    private struct Entry: Codable {
        var users: [Username]
        var activity: String
        var since: Int64
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd {
            let entry = try container.decode(Entry.self)
            guard entry.users.count == 2, entry.users[0] < entry.users[1],
                  activities(between: entry.users[0], and: entry.users[1])[entry.activity] == nil
            else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "bad or repeated match \(entry.users) on \(entry.activity)")
            }
            start(entry.users[0], entry.users[1], activity: entry.activity, since: entry.since)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for user in byUser.keys.sorted() {
            let partners = byUser[user]!
            for partner in partners.keys.sorted() where user < partner {
                let activities = partners[partner]!
                for activity in activities.keys.sorted() {
                    try container.encode(Entry(users: [user, partner], activity: activity, since: activities[activity]!))
                }
            }
        }
    }
}
