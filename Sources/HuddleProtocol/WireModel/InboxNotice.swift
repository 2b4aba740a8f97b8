/// A server notice on a user's `inbox:USER` channel (protocol.md, "Friends" and "Activities and
/// matches"): a publication with `from: null` whose `type` says what happened and whose `data`
/// says to whom. A notice this version does not know is `.other`.
public enum InboxNotice: Sendable, Equatable {
    /// `profile`: the sender's as it was when the request was sent.
    case friendRequest(from: String, to: String, message: String, profile: UserProfile = UserProfile())
    /// `from` sent the request that was accepted (or the first of two that crossed).
    case friendAccepted(from: String, to: String)
    case friendDeclined(from: String, to: String)
    case friendCancelled(from: String, to: String)
    /// `user` removed `friend`.
    case friendRemoved(user: String, friend: String)
    /// The caller and `user` are both up for `activity` now (told once to both, when it begins).
    case match(user: String, activity: String)
    /// The match with `user` on `activity` is over.
    case matchEnded(user: String, activity: String, reason: MatchEndReason)
    case other(type: String, data: JSONValue)

    /// The publication's `type`.
    public var type: String {
        switch self {
        case .friendRequest: return "friend_request"
        case .friendAccepted: return "friend_accepted"
        case .friendDeclined: return "friend_declined"
        case .friendCancelled: return "friend_cancelled"
        case .friendRemoved: return "friend_removed"
        case .match: return "match"
        case .matchEnded: return "match_ended"
        case .other(let type, _): return type
        }
    }

    /// The publication's `data`.
    public var data: JSONValue {
        switch self {
        case .friendRequest(let from, let to, let message, let profile):
            return .object([("from", .string(from)), ("to", .string(to)), ("message", .string(message))] + profile.members())
        case .friendAccepted(let from, let to), .friendDeclined(let from, let to), .friendCancelled(let from, let to):
            return .object([("from", .string(from)), ("to", .string(to))])
        case .friendRemoved(let user, let friend):
            return .object([("user", .string(user)), ("friend", .string(friend))])
        case .match(let user, let activity):
            return .object([("user", .string(user)), ("activity", .string(activity))])
        case .matchEnded(let user, let activity, let reason):
            return .object([("user", .string(user)), ("activity", .string(activity)), ("reason", .string(reason.name))])
        case .other(_, let data):
            return data
        }
    }

    /// The notice of type `type` with `data`; nil when a known type has the wrong shape.
    public init?(type: String, data: JSONValue) {
        func pair() -> (String, String)? {
            guard let from = data["from"]?.stringValue, let to = data["to"]?.stringValue else { return nil }
            return (from, to)
        }
        switch type {
        case "friend_request":
            guard let (from, to) = pair(), let message = data["message"]?.stringValue,
                let profile = try? UserProfile(in: data)
            else { return nil }
            self = .friendRequest(from: from, to: to, message: message, profile: profile)
        case "friend_accepted":
            guard let (from, to) = pair() else { return nil }
            self = .friendAccepted(from: from, to: to)
        case "friend_declined":
            guard let (from, to) = pair() else { return nil }
            self = .friendDeclined(from: from, to: to)
        case "friend_cancelled":
            guard let (from, to) = pair() else { return nil }
            self = .friendCancelled(from: from, to: to)
        case "friend_removed":
            guard let user = data["user"]?.stringValue, let friend = data["friend"]?.stringValue else { return nil }
            self = .friendRemoved(user: user, friend: friend)
        case "match":
            guard let user = data["user"]?.stringValue, let activity = data["activity"]?.stringValue else { return nil }
            self = .match(user: user, activity: activity)
        case "match_ended":
            guard let user = data["user"]?.stringValue, let activity = data["activity"]?.stringValue,
                let reason = data["reason"]?.stringValue
            else { return nil }
            self = .matchEnded(user: user, activity: activity, reason: MatchEndReason(reason))
        default:
            self = .other(type: type, data: data)
        }
    }

    /// The notice in `publication`, nil when it is not a server notice (it has a publisher)
    /// or a known type has the wrong shape.
    public init?(_ publication: ChannelPublication) {
        guard publication.from == nil else { return nil }
        self.init(type: publication.type, data: publication.data)
    }
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
    /// A reason this version does not know, as the server wrote it.
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

    /// As the notice spells it.
    public var name: String {
        switch self {
        case .off: return "off"
        case .expired: return "expired"
        case .unfriended: return "unfriended"
        case .audience: return "audience"
        case .other(let text): return text
        }
    }
}
