import HuddleProtocol

/// A signed-in user as the server describes it.
public struct HuddleUser: Sendable, Equatable {
    public var username: String
    public var email: String

    public init(username: String, email: String) {
        self.username = username
        self.email = email
    }

    static func decode(_ object: JSONValue) throws(HuddleClientError) -> HuddleUser {
        HuddleUser(username: try object.requiredString("username"), email: try object.requiredString("email"))
    }
}

/// The result of `signup`, `login` and `auth`, and of `whoami`: who the connection is signed
/// in as. `token` is there only after `signup` and `login`: keep it to sign in next time.
public struct HuddleSession: Sendable, Equatable {
    public var user: HuddleUser
    public var token: String?
    /// When the session's token expires, in milliseconds since the Unix epoch.
    public var expiresAt: Int64

    public init(user: HuddleUser, token: String?, expiresAt: Int64) {
        self.user = user
        self.token = token
        self.expiresAt = expiresAt
    }

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> HuddleSession {
        HuddleSession(
            user: try HuddleUser.decode(try result.requiredObject("user")), token: try result.optionalString("token"),
            expiresAt: try result.requiredInt64("expires_at"))
    }
}
