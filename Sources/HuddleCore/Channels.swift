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

    /// Appends to `name`, creating the channel (and its epoch) on its first publication.
    mutating func publish(to name: String, _ publication: RetainedPublication, limit: HistoryLimit) -> Publication {
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
        return Publication(
            channel: name, epoch: byName.values[index].epoch, offset: offset,
            type: publication.type, from: publication.from, data: publication.data, time: publication.time,
            clientID: publication.clientID
        )
    }
}

extension Channels {
    /// Account deletion. The channels that are the user's own or shared with one other user —
    /// `inbox:USER`, `loc:USER` and every `chat:` room with them — are dropped whole (a channel
    /// of that name made later starts a new epoch); in every other channel the user's
    /// publications become tombstones. O(retained publications): a scan, as deletions are rare.
    mutating func erase(_ user: Username) -> (dropped: Set<String>, removed: [(channel: String, offset: UInt64)]) {
        var dropped = Set<String>()
        var removed: [(channel: String, offset: UInt64)] = []
        for name in byName.keys.sorted() {
            if Self.isShared(name, onlyWith: user) {
                dropped.insert(name)
                continue
            }
            for offset in byName[name]!.offsets(publishedBy: user) {
                byName[name]!.remove(at: offset)
                removed.append((name, offset))
            }
        }
        for name in dropped { byName[name] = nil }
        return (dropped, removed)
    }

    /// Whether the channel belongs to `user` alone or to `user` and one other.
    static func isShared(_ name: String, onlyWith user: Username) -> Bool {
        switch (try? ChannelName(parsing: name))?.kind {
        case .inbox(let owner), .loc(let owner): owner == user
        case .chat(let first, let second): first == user || second == user
        case .room, nil: false
        }
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
