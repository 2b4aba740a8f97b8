/// One entry of the `sessions` result (protocol.md, "Sessions"): a signed-in device as its
/// owner sees it. `id` names the session for `session_revoke`; it is not the token and cannot
/// be used as one.
public struct SessionEntry: Sendable, Equatable {
    public var id: String
    public var device: String?
    public var createdAt: Int64
    /// The last sign-in with the session (login, signup or `auth`), to within the interval
    /// protocol.md gives; `connected` says whether it is in use right now.
    public var lastSeenAt: Int64
    public var expiresAt: Int64
    /// A connection of this node is signed in with it now.
    public var connected: Bool
    /// The session of the connection that asked.
    public var current: Bool

    public init(id: String, device: String?, createdAt: Int64, lastSeenAt: Int64, expiresAt: Int64, connected: Bool, current: Bool) {
        self.id = id
        self.device = device
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.expiresAt = expiresAt
        self.connected = connected
        self.current = current
    }

    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("device", device.map(JSONValue.string) ?? .null), ("created_at", .integer(createdAt)),
            ("last_seen_at", .integer(lastSeenAt)), ("expires_at", .integer(expiresAt)), ("connected", .bool(connected)),
            ("current", .bool(current)),
        ])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(
            id: try json.requiredString("id"), device: try json.optionalString("device"), createdAt: try json.requiredInt64("created_at"),
            lastSeenAt: try json.requiredInt64("last_seen_at"), expiresAt: try json.requiredInt64("expires_at"),
            connected: try json.requiredBool("connected"), current: try json.requiredBool("current"))
    }
}

/// The `sessions` result: most recently seen first; `total` counts them all when the list was cut.
public struct SessionList: Sendable, Equatable {
    public var sessions: [SessionEntry]
    public var total: Int

    public init(sessions: [SessionEntry], total: Int) {
        self.sessions = sessions
        self.total = total
    }

    public var result: JSONValue { .object([("sessions", .array(sessions.map(\.json))), ("total", .integer(total))]) }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(sessions: try result.requiredList("sessions", SessionEntry.init(json:)), total: try result.requiredInt("total"))
    }
}
