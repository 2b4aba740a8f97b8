import HuddleProtocol

/// Every user's profile that has something set (durable): display name and avatar
/// (protocol.md, "Profiles"). A user with neither has no entry.
///
/// Per user it holds one `UserProfile`; `erase` and `exported` are what account deletion and
/// export take of it. Coded as a list sorted by username.
public struct Profiles: Sendable, Equatable {
    public private(set) var byUser: [Username: UserProfile] = [:]

    public init() {}

    public var count: Int { byUser.count }

    public subscript(user: Username) -> UserProfile {
        byUser[user] ?? UserProfile()
    }

    mutating func set(_ profile: UserProfile, of user: Username) {
        byUser[user] = profile.isEmpty ? nil : profile
    }

    /// Everything kept of the user gone (account deletion).
    public mutating func erase(_ user: Username) {
        byUser[user] = nil
    }

    /// The user's profile for an export: both members, null when unset.
    public func exported(for user: Username) -> JSONValue {
        .object(self[user].explicitMembers)
    }
}

/// `{user, displayName?, avatar?}` objects, by user.
extension Profiles: PersistedValue {
    var persisted: JSONValue {
        .array(byUser.keys.sorted().map { user in
            let profile = byUser[user]!
            return .record([("user", user.persisted), ("displayName", profile.displayName?.persisted), ("avatar", profile.avatar?.persisted)])
        })
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for f in try PersistedFields.objects(persisted, "Profile") {
            let user: Username = try f("user")
            guard byUser[user] == nil else { throw RecordDecodingError("the profile of \(user) appears twice") }
            set(UserProfile(displayName: try f.optional("displayName"), avatar: try f.optional("avatar")), of: user)
        }
    }
}
