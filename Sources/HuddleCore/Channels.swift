import HuddleProtocol

/// Every channel that has ever been published to, by name, and how many were created — the
/// count feeds the next epoch (`ChannelEpoch`).
///
/// Coded as a list sorted by name, so equal states encode to equal bytes whatever the
/// dictionary's hash seed.
public struct Channels: Sendable, Equatable {
    public private(set) var byName: [String: Channel] = [:]
    public private(set) var createdCount: UInt64 = 0

    public init() {}

    public subscript(name: String) -> Channel? { byName[name] }

    /// Whether `name` exists, without copying its channel out as the subscript does.
    func contains(_ name: String) -> Bool { byName.index(forKey: name) != nil }

    /// Appends to `name`, creating the channel (and its epoch) on its first publication; with
    /// the publication, when the channel's oldest retained one expires now (its next trim), read
    /// while the channel is at hand rather than looked up again by name.
    mutating func publish(
        to name: String, _ publication: RetainedPublication, limit: HistoryLimit
    ) -> (publication: Publication, oldestExpiry: Int64?) {
        // One hash of the name per publish for an existing channel: mutate through the index.
        let index: Dictionary<String, Channel>.Index
        if let existing = byName.index(forKey: name) {
            index = existing
        } else {
            createdCount += 1
            byName[name] = Channel(epoch: ChannelEpoch.make(time: publication.time, sequence: createdCount))
            index = byName.index(forKey: name)!
        }
        let offset = byName.values[index].append(publication, limit: limit)
        let stored = Publication(
            channel: name, epoch: byName.values[index].epoch, offset: offset,
            type: publication.type, from: publication.from, data: publication.data, time: publication.time,
            clientID: publication.clientID
        )
        return (stored, byName.values[index].oldestExpiry(limit: limit))
    }
}

extension Channels {
    /// Account deletion, a chunk at a time (`HuddleCore+ErasureChunks`): a channel that was the
    /// deleted user's own or shared with one other goes whole (a channel of that name made later
    /// starts a new epoch).
    mutating func drop(_ name: String) { byName[name] = nil }

    /// Account deletion in a channel others write to too: each of the user's publications
    /// becomes a tombstone. O(the channel's retained publications).
    mutating func erase(_ user: Username, in name: String) {
        guard let offsets = byName[name]?.offsets(publishedBy: user) else { return }
        for offset in offsets { byName[name]!.remove(at: offset) }
    }

    /// Whether the channel belongs to `user` alone or to `user` and one other.
    static func isShared(_ name: String, onlyWith user: Username) -> Bool {
        switch (try? ChannelName(parsing: name))?.kind {
        case .inbox(let owner), .loc(let owner): owner == user
        case .chat(let first, let second): first == user || second == user
        case .room, nil: false
        }
    }

    /// The member of a 1:1 room other than `user`; nil for any other channel.
    static func otherMember(of name: String, besides user: Username) -> Username? {
        guard case .chat(let first, let second) = (try? ChannelName(parsing: name))?.kind else { return nil }
        return first == user ? second : first
    }

    /// Leaves a tombstone at `offset` of `name` (`Channel.remove(at:)`); false when there is
    /// nothing to remove there.
    @discardableResult
    mutating func remove(_ name: String, at offset: UInt64) -> Bool {
        byName[name]?.remove(at: offset) ?? false
    }

    /// Drops the channel's publications past `limit`'s age at `time` (`Channel.trimExpired`).
    mutating func trimExpired(_ name: String, at time: Int64, limit: HistoryLimit) {
        byName[name]?.trimExpired(at: time, limit: limit)
    }
}

/// The creation counter and `{name, channel}` objects by name.
extension Channels: PersistedValue {
    var persisted: JSONValue {
        let named = byName.keys.sorted().map { JSONValue.record([("name", $0.persisted), ("channel", byName[$0]!.persisted)]) }
        return .record([("createdCount", createdCount.persisted), ("channels", .array(named))])
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Channels")
        createdCount = try f("createdCount")
        for fields in try f.objects("channels", "NamedChannel") {
            let name: String = try fields("name")
            guard byName.updateValue(try fields("channel"), forKey: name) == nil else { throw RecordDecodingError("channel \(name) appears twice") }
        }
    }
}
