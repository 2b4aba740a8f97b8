/// One message on the presence channel (`huddle:presence`), written by the Lua scripts of
/// `RedisPresenceRegistry` and read here: `<node> <sequence> <op>[<user>]`, where the sequence
/// counts that node's changes (kept in Redis, so it goes on across the node's restarts) and
/// `op` is `+user` (online on that node), `-user` (offline there), `=` (the node registered
/// its whole set again: read it) or `!` (the node's lease expired or it left: its set is
/// deleted). Node names and usernames hold no spaces.
public struct PresenceMessage: Sendable, Equatable {
    public enum Operation: Sendable, Equatable {
        case online(String)
        case offline(String)
        case registered
        case gone
    }

    public var node: String
    public var sequence: UInt64
    public var operation: Operation

    public init(node: String, sequence: UInt64, operation: Operation) {
        self.node = node
        self.sequence = sequence
        self.operation = operation
    }

    /// nil for anything else (another program on the channel, a truncated message).
    public init?(_ payload: [UInt8]) {
        let parts = payload.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, let op = parts[2].first,
              let sequence = UInt64(String(decoding: parts[1], as: UTF8.self)) else { return nil }
        let user = String(decoding: parts[2].dropFirst(), as: UTF8.self)
        switch (op, user.isEmpty) {
        case (UInt8(ascii: "+"), false): operation = .online(user)
        case (UInt8(ascii: "-"), false): operation = .offline(user)
        case (UInt8(ascii: "="), true): operation = .registered
        case (UInt8(ascii: "!"), true): operation = .gone
        default: return nil
        }
        node = String(decoding: parts[0], as: UTF8.self)
        self.sequence = sequence
    }
}
