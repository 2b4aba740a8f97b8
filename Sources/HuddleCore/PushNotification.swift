/// Something owed to a user who has no live connection, for the server's push gateway
/// (`CoreOutput.pushNotification`). Ephemeral: it is never logged, and what it tells of is
/// durable on its own (the chat message in its room, the friend notice in the inbox).
public struct PushNotification: Sendable, Equatable {
    /// Who is to be told.
    public var user: Username
    public var kind: PushKind
    /// One line for the notification's heading: the user who caused it.
    public var title: String
    public var body: PushBody
    /// The user's badge once this is counted: unread chat publications over all their rooms.
    public var badge: UInt64
    /// Where the app should open, e.g. `huddle://chat/chat:alice~bob`.
    public var target: String
    /// The position of the publication that caused it (`chat:alice~bob/7`, `inbox:bob/3`):
    /// unique per notification, so a receiver can drop a delivery it has seen (a retry after a
    /// lost answer).
    public var id: String
    /// The user who caused it.
    public var from: Username
    /// When it happened, milliseconds since the Unix epoch.
    public var time: Int64

    public init(
        user: Username, kind: PushKind, title: String, body: PushBody, badge: UInt64, target: String, id: String,
        from: Username, time: Int64
    ) {
        self.user = user
        self.kind = kind
        self.title = title
        self.body = body
        self.badge = badge
        self.target = target
        self.id = id
        self.from = from
        self.time = time
    }
}

/// A notification's text.
public enum PushBody: Sendable, Equatable {
    /// The text itself.
    case text(String)
    /// A chat publication's `data` (serialized JSON). The core has no JSON parser, and the
    /// server's gateway parses off the core's thread: it shows the `text` member of an object,
    /// or a generic line for anything else.
    case messageData(String)
}
