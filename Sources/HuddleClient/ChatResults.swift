import HuddleProtocol

/// The result of `mark_read`: the caller's marker in the room now.
public struct ReadMarker: Sendable, Equatable {
    public var channel: String
    /// The newest offset read.
    public var read: UInt64
    /// What is left unread in this room.
    public var unread: UInt64
    /// The caller's unread total over every room.
    public var badge: UInt64

    public init(channel: String, read: UInt64, unread: UInt64, badge: UInt64) {
        self.channel = channel
        self.read = read
        self.unread = unread
        self.badge = badge
    }
}

/// One room of `unread`.
public struct RoomUnread: Sendable, Equatable {
    public var channel: String
    public var offset: UInt64
    public var read: UInt64
    public var unread: UInt64

    public init(channel: String, offset: UInt64, read: UInt64, unread: UInt64) {
        self.channel = channel
        self.offset = offset
        self.read = read
        self.unread = unread
    }
}

/// The result of `unread`: rooms sorted by name, and the badge.
public struct UnreadSummary: Sendable, Equatable {
    public var rooms: [RoomUnread]
    public var total: UInt64

    public init(rooms: [RoomUnread], total: UInt64) {
        self.rooms = rooms
        self.total = total
    }
}

/// Names of 1:1 chat rooms (protocol.md, "Chat").
public enum ChatRoom {
    /// `chat:A~B` with the two usernames lowercased and in ascending byte order, so both
    /// members name the same room.
    public static func name(_ one: String, _ other: String) -> String {
        let a = one.lowercased(), b = other.lowercased()
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? "chat:\(a)~\(b)" : "chat:\(b)~\(a)"
    }

    /// The other member of `channel` for `user`, nil when `channel` is not a room of `user`.
    public static func partner(in channel: String, for user: String) -> String? {
        guard channel.hasPrefix("chat:") else { return nil }
        let members = channel.dropFirst(5).split(separator: "~", omittingEmptySubsequences: false)
        guard members.count == 2 else { return nil }
        if members[0] == user { return String(members[1]) }
        if members[1] == user { return String(members[0]) }
        return nil
    }
}
