import HuddleProtocol

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

    /// Account deletion: `reader`'s marker in a channel dropped with the deleted user, so a
    /// channel of that name made later starts unread from its first offset.
    mutating func forget(_ channel: String, of reader: Username) {
        offsetsByUser[reader]?[channel] = nil
        if offsetsByUser[reader]?.isEmpty == true { offsetsByUser[reader] = nil }
    }

    /// Account deletion: the user's markers, and everyone's in `channels` (the rooms dropped
    /// with the user), so a room of that name made later starts unread from its first offset.
    mutating func erase(_ user: Username, droppedChannels channels: Set<String>) {
        offsetsByUser[user] = nil
        guard !channels.isEmpty else { return }
        for (reader, offsets) in offsetsByUser where offsets.keys.contains(where: channels.contains) {
            let kept = offsets.filter { !channels.contains($0.key) }
            offsetsByUser[reader] = kept.isEmpty ? nil : kept
        }
    }
}

/// `{user, channel, offset}` objects, by user, then channel.
extension ReadMarkers: PersistedValue {
    var persisted: JSONValue {
        var markers: [JSONValue] = []
        for user in offsetsByUser.keys.sorted() {
            let offsets = offsetsByUser[user]!
            for channel in offsets.keys.sorted() {
                markers.append(.record([("user", user.persisted), ("channel", channel.persisted), ("offset", offsets[channel]!.persisted)]))
            }
        }
        return .array(markers)
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for f in try PersistedFields.objects(persisted, "ReadMarker") {
            let user: Username = try f("user")
            let channel: String = try f("channel")
            guard offsetsByUser[user]?[channel] == nil else { throw RecordDecodingError("read marker of \(user) in \(channel) appears twice") }
            offsetsByUser[user, default: [:]][channel] = try f("offset")
        }
    }
}
