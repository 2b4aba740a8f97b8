import HuddleProtocol

/// A server notice on a user's `inbox:USER` channel (protocol.md, "Friends"), typed. Notices
/// are publications with `from: null`; one this client version does not know is `.other`.
public enum InboxNotice: Sendable, Equatable {
    case friendRequest(from: String, to: String, message: String)
    /// `from` sent the request that was accepted (or the first of two that crossed).
    case friendAccepted(from: String, to: String)
    case friendDeclined(from: String, to: String)
    case friendCancelled(from: String, to: String)
    /// `user` removed `friend`.
    case friendRemoved(user: String, friend: String)
    case other(type: String, data: JSONValue)

    /// The notice in `publication`, nil when it is not a server notice (it has a publisher)
    /// or a known type has the wrong shape.
    public init?(_ publication: ChannelPublication) {
        guard publication.from == nil else { return nil }
        let data = publication.data
        func pair() -> (String, String)? {
            guard let from = data["from"]?.stringValue, let to = data["to"]?.stringValue else { return nil }
            return (from, to)
        }
        switch publication.type {
        case "friend_request":
            guard let (from, to) = pair(), let message = data["message"]?.stringValue else { return nil }
            self = .friendRequest(from: from, to: to, message: message)
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
        default:
            self = .other(type: publication.type, data: data)
        }
    }
}
