import HuddleProtocol

/// Deleted accounts whose channels are still being erased (protocol.md, "Deletion and
/// retention"). The deletion itself (`eraseUser`) takes everything else at once and puts the user
/// here; their channels then go in bounded chunks (`eraseChannels`), one per turn, until
/// `finishErasure`, so erasing a user with a large history never stalls everyone else. Meanwhile
/// reads see what the chunks will leave: the user's own and 1:1 channels as gone, their other
/// publications as tombstones (`HuddleCore.readableChannel`, `readable(_:)`).
///
/// Durable, so a restart (or another node) carries on with the erasure; by user, with the time
/// of the deletion.
public struct PendingErasures: Sendable, Equatable {
    private(set) var deletedAt: [Username: Int64] = [:]

    public var isEmpty: Bool { deletedAt.isEmpty }
    public var count: Int { deletedAt.count }

    public func contains(_ user: Username) -> Bool { deletedAt[user] != nil }

    /// The user whose erasure goes on next: the one deleted first (then by name), so every
    /// node and every replay picks the same.
    var next: Username? { deletedAt.min { ($0.value, $0.key) < ($1.value, $1.key) }?.key }

    /// Whether `name` is a channel that goes whole with a user being erased: the user's own
    /// (`inbox:`, `loc:`) or a 1:1 room of theirs.
    func dropsChannel(_ name: String) -> Bool {
        guard !deletedAt.isEmpty, let kind = (try? ChannelName(parsing: name))?.kind else { return false }
        switch kind {
        case .inbox(let owner), .loc(let owner): return deletedAt[owner] != nil
        case .chat(let first, let second): return deletedAt[first] != nil || deletedAt[second] != nil
        case .room: return false
        }
    }

    mutating func begin(_ user: Username, at time: Int64) { deletedAt[user] = time }

    mutating func finish(_ user: Username) { deletedAt[user] = nil }
}

/// `{username, deletedAt}` objects sorted by username.
extension PendingErasures: PersistedValue {
    var persisted: JSONValue {
        .array(deletedAt.keys.sorted().map { user in .record([("username", user.persisted), ("deletedAt", deletedAt[user]!.persisted)]) })
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for fields in try PersistedFields.objects(persisted, "PendingErasure") {
            deletedAt[try fields("username")] = try fields("deletedAt")
        }
    }
}
