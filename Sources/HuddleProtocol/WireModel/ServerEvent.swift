/// The server's events (protocol.md, "Events"): every message that answers no request. One
/// encoder (`message`, the server's) and one decoder (`init(json:)`, the clients').
///
/// The server's hot paths — a publication fanned out to every subscriber, presence, typing —
/// write their bytes with `ServerMessage`'s builders, which `message` uses too, so both
/// spell each event the same way.
public enum ServerEvent: Sendable, Equatable {
    case publication(ChannelPublication)
    /// The publication at `offset` became a tombstone (an operator's removal, its author's
    /// account deleted) at `time`.
    case publicationRemoved(channel: String, epoch: String, offset: UInt64, time: Int64)
    /// A friend came online or went offline.
    case presence(user: String, online: Bool, time: Int64)
    /// The other member of a chat room is typing.
    case typing(channel: String, user: String, time: Int64)
    /// A token sign-in (`?token=` or `auth`) succeeded.
    case session(user: UserInfo, expiresAt: Int64, time: Int64)
    /// A token sign-in failed; the server closes the connection after it.
    case authFailed(code: String, message: String, time: Int64)
    case feed(FeedEvent)
    case memoryChanged(MemoryChange, time: Int64)
    /// A friend (or the user, on another device) changed their profile: the whole profile now.
    case profile(user: String, UserProfile, time: Int64)

    /// The name of the event `message` is (its `event` member); nil for a reply.
    public static func name(of message: JSONValue) -> String? { message["event"]?.stringValue }

    /// Whether the event named `name` is one whose body an application may read itself when
    /// this version cannot: the feed's and the memories' (their bodies grow new fields).
    public static func isFeedOrMemory(_ name: String) -> Bool { FeedEvent.names.contains(name) || name == memoryChanged }

    static let memoryChanged = "memory_changed"

    /// The event as one text message.
    public var message: [UInt8] {
        switch self {
        case .publication(let publication):
            return ServerMessage.publicationEvent(
                channel: publication.channel, epoch: publication.epoch, offset: publication.offset, type: publication.type,
                from: publication.from, data: JSONWriter.serialize(publication.data), time: publication.time,
                clientID: publication.clientID)
        case .publicationRemoved(let channel, let epoch, let offset, let time):
            return ServerMessage.publicationRemovedEvent(channel: channel, epoch: epoch, offset: offset, time: time)
        case .presence(let user, let online, let time):
            return ServerMessage.presenceEvent(user: user, online: online, time: time)
        case .typing(let channel, let user, let time):
            return ServerMessage.typingEvent(channel: channel, user: user, time: time)
        case .session(let user, let expiresAt, let time):
            return ServerMessage.sessionEvent(username: user.username, email: user.email, expiresAt: expiresAt, time: time)
        case .authFailed(let code, let message, let time):
            return ServerMessage.authFailedEvent(code: code, message: message, time: time)
        case .feed(let event):
            return JSONWriter.bytes(event.event)
        case .memoryChanged(let change, let time):
            return JSONWriter.bytes(change.event(time: time))
        case .profile(let user, let profile, let time):
            let members: [(String, JSONValue)] = [("event", .string("profile")), ("user", .string(user))] + profile.explicitMembers
            return JSONWriter.bytes(.object(members + [("time", .integer(time))]))
        }
    }

    /// The event `message` tells; nil when it is no event or one this version does not know
    /// (a `memory_changed` with an unknown action too), so a newer server's additions pass by.
    public init?(json message: JSONValue) throws(WireFormatError) {
        guard let name = Self.name(of: message) else { return nil }
        switch name {
        case "publication":
            let channel = try message.requiredString("channel")
            let epoch = try message.requiredString("epoch")
            self = .publication(try ChannelPublication(json: message, channel: channel, epoch: epoch))
        case "publication_removed":
            self = .publicationRemoved(
                channel: try message.requiredString("channel"), epoch: try message.requiredString("epoch"),
                offset: try message.requiredUInt64("offset"), time: try message.requiredInt64("time"))
        case "presence":
            self = .presence(user: try message.requiredString("user"), online: try message.requiredBool("online"), time: try message.requiredInt64("time"))
        case "typing":
            self = .typing(channel: try message.requiredString("channel"), user: try message.requiredString("user"), time: try message.requiredInt64("time"))
        case "session":
            self = .session(
                user: try UserInfo(json: try message.requiredObject("user")), expiresAt: try message.requiredInt64("expires_at"),
                time: try message.requiredInt64("time"))
        case "auth_failed":
            let error = try message.requiredObject("error")
            self = .authFailed(code: try error.requiredString("code"), message: try error.requiredString("message"), time: try message.requiredInt64("time"))
        case "profile":
            guard message["display_name"] != nil, message["avatar"] != nil else { throw WireFormatError("`display_name` or `avatar` is missing") }
            self = .profile(user: try message.requiredString("user"), try UserProfile(in: message), time: try message.requiredInt64("time"))
        case "memory_changed":
            guard let (change, time) = try MemoryChange.decode(event: message) else { return nil }
            self = .memoryChanged(change, time: time)
        default:
            guard let event = try FeedEvent(name: name, event: message) else { return nil }
            self = .feed(event)
        }
    }
}
