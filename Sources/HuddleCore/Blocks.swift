import HuddleProtocol

/// Who blocked whom (durable; protocol.md, "Blocking").
///
/// A block is one-sided (the blocker's choice) but its effects go both ways, so both
/// directions are indexed: `blockedBy` answers the blocker's list, `blockers` lets
/// `eitherBlocks` — which every path that hides one user from another asks — be two lookups.
/// Coded as sorted (blocker, blocked) pairs, so equal states encode to equal bytes; the reverse
/// index is rebuilt when decoding.
public struct Blocks: Sendable, Equatable {
    /// How many users one user may block (protocol.md, "Limits"). Every core replaying a log must
    /// use the same bound to reach the same state, so it is a constant, not configuration.
    public static let maxBlocksPerUser = 1000

    private var blockedBy: [Username: Set<Username>] = [:]
    private var blockers: [Username: Set<Username>] = [:]

    public init() {}

    /// Whether `blocker` blocked `blocked` (one direction).
    public func blocks(_ blocker: Username, _ blocked: Username) -> Bool {
        blockedBy[blocker]?.contains(blocked) == true
    }

    /// Whether either of the two blocked the other: what hides them from each other.
    public func eitherBlocks(_ first: Username, _ second: Username) -> Bool {
        blocks(first, second) || blocks(second, first)
    }

    /// Everyone `user` must not see nor be seen by: those they blocked and those who blocked them.
    public func hidden(from user: Username) -> Set<Username> {
        (blockedBy[user] ?? []).union(blockers[user] ?? [])
    }

    /// The users `blocker` blocked, in byte order.
    public func blocked(by blocker: Username) -> [Username] {
        (blockedBy[blocker] ?? []).sorted()
    }

    /// How many users `blocker` blocked, in O(1).
    public func count(of blocker: Username) -> Int { blockedBy[blocker]?.count ?? 0 }

    public var blockCount: Int { blockedBy.values.reduce(0) { $0 + $1.count } }

    mutating func block(_ blocker: Username, _ blocked: Username) {
        blockedBy[blocker, default: []].insert(blocked)
        blockers[blocked, default: []].insert(blocker)
    }

    mutating func unblock(_ blocker: Username, _ blocked: Username) {
        blockedBy[blocker]?.remove(blocked)
        if blockedBy[blocker]?.isEmpty == true { blockedBy[blocker] = nil }
        blockers[blocked]?.remove(blocker)
        if blockers[blocked]?.isEmpty == true { blockers[blocked] = nil }
    }

    /// Forgets every block `user` made and every block of `user` (account deletion).
    mutating func erase(_ user: Username) {
        for blocked in blockedBy[user] ?? [] { unblock(user, blocked) }
        for blocker in blockers[user] ?? [] { unblock(blocker, user) }
    }

    /// What an export of `user` holds: the users they blocked. Who blocked them is the
    /// blockers' data, not theirs, and is never shown to them.
    public func exported(for user: Username) -> JSONValue {
        .object([("blocked", .strings(blocked(by: user)))])
    }
}

/// The blocks as sorted [blocker, blocked] pairs.
extension Blocks: PersistedValue {
    var persisted: JSONValue {
        var pairs: [[Username]] = []
        for blocker in blockedBy.keys.sorted() {
            for blocked in blockedBy[blocker]!.sorted() { pairs.append([blocker, blocked]) }
        }
        return .record([("blocks", pairs.persisted)])
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Blocks")
        let pairs: [[Username]] = try f("blocks")
        for pair in pairs {
            guard pair.count == 2, pair[0] != pair[1], !blocks(pair[0], pair[1]) else { throw RecordDecodingError("bad or repeated block \(pair)") }
            block(pair[0], pair[1])
        }
    }
}
