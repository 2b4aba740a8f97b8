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
