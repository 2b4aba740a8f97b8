/// The result of `signup`, `login` and `auth`, and of `whoami`: who the connection is signed
/// in as. `token` is there only after `signup` and `login`: keep it to sign in next time.
public struct AccountSession: Sendable, Equatable {
    public var user: UserInfo
    public var token: String?
    /// When the session's token expires, in milliseconds since the Unix epoch.
    public var expiresAt: Int64

    public init(user: UserInfo, token: String?, expiresAt: Int64) {
        self.user = user
        self.token = token
        self.expiresAt = expiresAt
    }

    public var result: JSONValue {
        var members: [(String, JSONValue)] = [("user", user.json)]
        if let token { members.append(("token", .string(token))) }
        members.append(("expires_at", .integer(expiresAt)))
        return .object(members)
    }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(
            user: try UserInfo(json: try result.requiredObject("user")), token: try result.optionalString("token"),
            expiresAt: try result.requiredInt64("expires_at"))
    }
}

/// What `friend_request` did.
public enum FriendRequestOutcome: String, Sendable, Equatable {
    /// The request waits for an answer.
    case requested
    /// The other user had asked already: the two requests crossed and they are friends now.
    case friends

    public var result: JSONValue { .object([("status", .string(rawValue))]) }

    public init(result: JSONValue) throws(WireFormatError) {
        let status = try result.requiredString("status")
        guard let outcome = Self(rawValue: status) else { throw WireFormatError("`status` is \(status)") }
        self = outcome
    }
}

/// A request waiting for an answer; `user` is the other side.
public struct FriendRequestEntry: Sendable, Equatable {
    public var user: String
    public var message: String
    public var time: Int64
    /// `user`'s profile.
    public var profile: UserProfile

    public init(user: String, message: String, time: Int64, profile: UserProfile = UserProfile()) {
        self.user = user
        self.message = message
        self.time = time
        self.profile = profile
    }

    public var json: JSONValue {
        .object([("user", .string(user)), ("message", .string(message)), ("time", .integer(time))] + profile.members())
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(
            user: try json.requiredString("user"), message: try json.requiredString("message"), time: try json.requiredInt64("time"),
            profile: try UserProfile(in: json))
    }
}

/// The result of `friend_requests`, each list newest first.
public struct FriendRequestList: Sendable, Equatable {
    public var incoming: [FriendRequestEntry]
    public var outgoing: [FriendRequestEntry]

    public init(incoming: [FriendRequestEntry], outgoing: [FriendRequestEntry]) {
        self.incoming = incoming
        self.outgoing = outgoing
    }

    public var result: JSONValue { .object([("incoming", .array(incoming.map(\.json))), ("outgoing", .array(outgoing.map(\.json)))]) }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(
            incoming: try result.requiredList("incoming", FriendRequestEntry.init(json:)),
            outgoing: try result.requiredList("outgoing", FriendRequestEntry.init(json:)))
    }
}
