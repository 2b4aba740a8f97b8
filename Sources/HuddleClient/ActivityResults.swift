import HuddleProtocol

/// One of the caller's activities that is on (protocol.md, "Activities and matches").
public struct ActivityStatus: Sendable, Equatable {
    /// As the server's list spells it.
    public var activity: String
    /// nil: every friend; otherwise the chosen friends, sorted.
    public var audience: [String]?
    /// When it was turned on (turning it on again keeps it).
    public var since: Int64
    public var expiresAt: Int64

    public init(activity: String, audience: [String]?, since: Int64, expiresAt: Int64) {
        self.activity = activity
        self.audience = audience
        self.since = since
        self.expiresAt = expiresAt
    }

    static func decode(_ object: JSONValue) throws(HuddleClientError) -> ActivityStatus {
        let audience: [String]?
        if let value = object["audience"], value != .null {
            audience = try object.requiredStrings("audience")
        } else {
            audience = nil
        }
        return ActivityStatus(
            activity: try object.requiredString("activity"), audience: audience, since: try object.requiredInt64("since"),
            expiresAt: try object.requiredInt64("expires_at"))
    }
}

/// The result of `activities`: the server's list and the caller's statuses that are on, in the list's order.
public struct ActivityList: Sendable, Equatable {
    public var available: [String]
    public var mine: [ActivityStatus]

    public init(available: [String], mine: [ActivityStatus]) {
        self.available = available
        self.mine = mine
    }

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> ActivityList {
        var mine: [ActivityStatus] = []
        for object in try result.requiredArray("mine") { mine.append(try ActivityStatus.decode(object)) }
        return ActivityList(available: try result.requiredStrings("available"), mine: mine)
    }
}

/// A match in force: the caller and `user` are both up for `activity`.
public struct ActivityMatch: Sendable, Equatable {
    /// The other one.
    public var user: String
    public var activity: String
    public var since: Int64

    public init(user: String, activity: String, since: Int64) {
        self.user = user
        self.activity = activity
        self.since = since
    }

    static func decode(_ object: JSONValue) throws(HuddleClientError) -> ActivityMatch {
        ActivityMatch(user: try object.requiredString("user"), activity: try object.requiredString("activity"), since: try object.requiredInt64("since"))
    }
}

/// How `matches` orders its list.
public enum MatchOrder: String, Sendable, Equatable {
    /// Newest first.
    case time
    /// By activity in the server list's order, newest first within one.
    case activity
}

/// Why a match ended (the `reason` of a `match_ended` notice).
public enum MatchEndReason: Sendable, Equatable {
    /// One of the two turned the activity off.
    case off
    case expired
    /// The friendship ended.
    case unfriended
    /// One turned the activity on again for an audience without the other.
    case audience
    /// A reason this client version does not know, as the server wrote it.
    case other(String)

    public init(_ text: String) {
        switch text {
        case "off": self = .off
        case "expired": self = .expired
        case "unfriended": self = .unfriended
        case "audience": self = .audience
        default: self = .other(text)
        }
    }
}
