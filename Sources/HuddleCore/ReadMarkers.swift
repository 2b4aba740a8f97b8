/// How far each user has read each chat room (durable): the offset of the newest publication
/// they have seen. Unread counts and the badge are the distance to the channel's last offset.
///
/// A marker only moves forward. Publishing to a room moves the publisher's marker to the new
/// publication (answering means having read what came before), which `apply` does for the
/// `publish` command itself, so no extra command is logged per message.
/// Coded as a list sorted by user, then channel.
public struct ReadMarkers: Sendable, Equatable {
    private var offsetsByUser: [Username: [String: UInt64]] = [:]

    public init() {}

    public func offset(of user: Username, in channel: String) -> UInt64 {
        offsetsByUser[user]?[channel] ?? 0
    }

    /// Channels where the user has a marker.
    func channels(of user: Username) -> Dictionary<String, UInt64>.Keys? {
        offsetsByUser[user]?.keys
    }

    /// Moves the marker to `offset` unless it is there or further already.
    mutating func advance(_ user: Username, in channel: String, to offset: UInt64) {
        if offset > self.offset(of: user, in: channel) { offsetsByUser[user, default: [:]][channel] = offset }
    }
}

extension ReadMarkers: Codable {
    private struct Marker: Codable {
        var user: Username
        var channel: String
        var offset: UInt64
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd {
            let marker = try container.decode(Marker.self)
            guard offsetsByUser[marker.user]?[marker.channel] == nil else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "read marker of \(marker.user) in \(marker.channel) appears twice")
            }
            offsetsByUser[marker.user, default: [:]][marker.channel] = marker.offset
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for user in offsetsByUser.keys.sorted() {
            let markers = offsetsByUser[user]!
            for channel in markers.keys.sorted() {
                try container.encode(Marker(user: user, channel: channel, offset: markers[channel]!))
            }
        }
    }
}
