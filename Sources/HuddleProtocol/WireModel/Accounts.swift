/// What a client is told about an account (protocol.md: the `user` object).
///
public struct UserInfo: Sendable, Equatable {
    public var username: String
    public var email: String

    public init(username: String, email: String) {
        self.username = username
        self.email = email
    }

    public var json: JSONValue { .object([("username", .string(username)), ("email", .string(email))]) }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(username: try json.requiredString("username"), email: try json.requiredString("email"))
    }
}

/// One entry of the `friends` list: a friend, whether they are online now, and their profile.
public struct FriendStatus: Sendable, Equatable {
    public var username: String
    public var online: Bool
    public var profile: UserProfile

    public init(username: String, online: Bool, profile: UserProfile = UserProfile()) {
        self.username = username
        self.online = online
        self.profile = profile
    }

    public var json: JSONValue { .object([("username", .string(username)), ("online", .bool(online))] + profile.members()) }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(username: try json.requiredString("username"), online: try json.requiredBool("online"), profile: try UserProfile(in: json))
    }
}
