/// One activity a user has on (protocol.md, "Activities and matches"): who may match with it,
/// since when, and until when.
///
public struct ActivityStatus: Sendable, Equatable {
    /// As the server's list spells it.
    public var activity: String
    /// nil: every friend; otherwise the chosen friends, sorted, unique.
    public var audience: [String]?
    /// When it was turned on; turning it on again while on keeps this.
    public var since: Int64
    /// From this time on it counts as off.
    public var expiresAt: Int64

    public init(activity: String, audience: [String]?, since: Int64, expiresAt: Int64) {
        self.activity = activity
        self.audience = audience
        self.since = since
        self.expiresAt = expiresAt
    }

    /// `{"activity", "audience" (null: every friend), "since", "expires_at"}`.
    public var json: JSONValue {
        .object([
            ("activity", .string(activity)), ("audience", audience.map(JSONValue.strings) ?? .null), ("since", .integer(since)),
            ("expires_at", .integer(expiresAt)),
        ])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        var audience: [String]?
        if let value = json["audience"], value != .null { audience = try json.requiredStrings("audience") }
        self.init(
            activity: try json.requiredString("activity"), audience: audience, since: try json.requiredInt64("since"),
            expiresAt: try json.requiredInt64("expires_at"))
    }
}

/// A current match as its user sees it: with whom, on what, since when.
public struct ActivityMatch: Sendable, Equatable {
    /// The other user.
    public var user: String
    public var activity: String
    public var since: Int64

    public init(user: String, activity: String, since: Int64) {
        self.user = user
        self.activity = activity
        self.since = since
    }

    /// `{"user", "activity", "since"}`.
    public var json: JSONValue { .object([("user", .string(user)), ("activity", .string(activity)), ("since", .integer(since))]) }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(user: try json.requiredString("user"), activity: try json.requiredString("activity"), since: try json.requiredInt64("since"))
    }
}
