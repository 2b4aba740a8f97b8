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
    /// Drops the channel's publications past `limit`'s age at `time` (`Channel.trimExpired`).
    mutating func trimExpired(_ name: String, at time: Int64, limit: HistoryLimit) {
        byName[name]?.trimExpired(at: time, limit: limit)
    }
}

extension Channels: Codable {
    private enum CodingKeys: String, CodingKey {
        case createdCount, channels
    }

    private struct NamedChannel: Codable {
        var name: String
        var channel: Channel
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        createdCount = try container.decode(UInt64.self, forKey: .createdCount)
        for named in try container.decode([NamedChannel].self, forKey: .channels) {
            guard byName.updateValue(named.channel, forKey: named.name) == nil else {
                throw DecodingError.dataCorruptedError(
                    forKey: .channels, in: container, debugDescription: "channel \(named.name) appears twice"
                )
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(createdCount, forKey: .createdCount)
        let named = byName.keys.sorted().map { NamedChannel(name: $0, channel: byName[$0]!) }
        try container.encode(named, forKey: .channels)
    }
}
