/// What a push notification is about: the webhook's `kind` (protocol.md, "Notifications and
/// push").
///
/// Named constants on a struct rather than enum cases, so that a feature adds its own kind in
/// its own file (`extension PushKind { static let match = PushKind(rawValue: "match") }`)
/// without editing a shared switch: the server only writes `rawValue` out.
public struct PushKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// snake_case, as the webhook receives it.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// A chat message to a member who has no live connection.
    public static let chatMessage = PushKind(rawValue: "chat_message")
    /// Someone asked the user to be friends.
    public static let friendRequest = PushKind(rawValue: "friend_request")
    /// Someone accepted the user's friend request (or their requests crossed).
    public static let friendAccepted = PushKind(rawValue: "friend_accepted")
}
