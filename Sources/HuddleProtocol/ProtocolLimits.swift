/// The protocol's request limits (protocol.md, "Limits"). The server enforces them while
/// decoding, before a request reaches the core.
public struct ProtocolLimits: Sendable {
    /// Nesting of arrays and objects in one message; a top-level object is depth 1.
    public var maxDepth = 32
    /// A publication's `data`, serialized compactly.
    public var maxDataBytes = 16 * 1024
    public var maxIDLength = 64
    public var maxHistoryLimit = 100
    public var defaultHistoryLimit = 50
    public var maxSearchLimit = 50
    public var defaultSearchLimit = 20
    /// The note that goes with a friend request, in characters.
    public var maxFriendMessageLength = 200

    public init() {}
}
