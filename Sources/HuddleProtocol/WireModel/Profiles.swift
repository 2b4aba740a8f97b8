/// What a user shows of themselves besides the username (protocol.md, "Profiles"): a display
/// name and an avatar (the SHA-256 hex of a photo the user owns). Either may be unset.
///
/// On the wire it is flat: `display_name` and `avatar` members of whatever object names the
/// user (a `friends` entry, a request, a post's author with the prefix `author_`), each present
/// only when set, so a client written before profiles reads every object as before.
public struct UserProfile: Sendable, Equatable {
    public var displayName: String?
    public var avatar: String?

    public init(displayName: String? = nil, avatar: String? = nil) {
        self.displayName = displayName
        self.avatar = avatar
    }

    public var isEmpty: Bool { displayName == nil && avatar == nil }

    /// The members to add to an object, `prefix` before each name; none when unset.
    public func members(prefix: String = "") -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        if let displayName { members.append((prefix + "display_name", .string(displayName))) }
        if let avatar { members.append((prefix + "avatar", .string(avatar))) }
        return members
    }

    /// The profile in an object's members written by `members(prefix:)`.
    public init(in json: JSONValue, prefix: String = "") throws(WireFormatError) {
        self.init(displayName: try json.optionalString(prefix + "display_name"), avatar: try json.optionalString(prefix + "avatar"))
    }

    /// The `profile` result and event body: both members, null when unset.
    public var explicitMembers: [(String, JSONValue)] {
        [("display_name", displayName.map(JSONValue.string) ?? .null), ("avatar", avatar.map(JSONValue.string) ?? .null)]
    }
}

/// The `profile` and `profile_set` result: the caller's own profile, both members always
/// present (null when unset).
public struct OwnProfile: Sendable, Equatable {
    public var username: String
    public var profile: UserProfile

    public init(username: String, profile: UserProfile) {
        self.username = username
        self.profile = profile
    }

    public var result: JSONValue { .object([("username", .string(username))] + profile.explicitMembers) }

    public init(result: JSONValue) throws(WireFormatError) {
        guard result["display_name"] != nil, result["avatar"] != nil else { throw WireFormatError("`display_name` or `avatar` is missing") }
        self.init(username: try result.requiredString("username"), profile: try UserProfile(in: result))
    }
}

/// The `user_search` result: the matching usernames, and the display names of those that have
/// one (`display_names`, present only when some do).
public struct UserSearchResult: Sendable, Equatable {
    public var users: [String]
    /// In `users`' order.
    public var displayNames: [(username: String, displayName: String)]

    public init(users: [String], displayNames: [(username: String, displayName: String)] = []) {
        self.users = users
        self.displayNames = displayNames
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.users == rhs.users && lhs.displayNames.map(\.username) == rhs.displayNames.map(\.username)
            && lhs.displayNames.map(\.displayName) == rhs.displayNames.map(\.displayName)
    }

    public var result: JSONValue {
        var members: [(String, JSONValue)] = [("users", .strings(users))]
        if !displayNames.isEmpty { members.append(("display_names", .object(displayNames.map { ($0.username, .string($0.displayName)) }))) }
        return .object(members)
    }

    public init(result: JSONValue) throws(WireFormatError) {
        var names: [(username: String, displayName: String)] = []
        if let value = result["display_names"] {
            guard case .object(let members) = value else { throw WireFormatError("`display_names` is not an object") }
            for (username, name) in members {
                guard let name = name.stringValue else { throw WireFormatError("`display_names` holds a non-string") }
                names.append((username, name))
            }
        }
        self.init(users: try result.requiredStrings("users"), displayNames: names)
    }
}
