/// The result of `subscribe` as the server sends it: the channel's position, the publications
/// it replays, and for a `loc:USER` channel where USER is now.
public struct Subscription: Sendable, Equatable {
    public var channel: String
    public var epoch: String
    /// The channel's latest offset (0 when it has none yet).
    public var offset: UInt64
    /// nil without `since`; false when publications after `since` could not be replayed.
    public var recovered: Bool?
    /// Oldest first.
    public var publications: [ChannelPublication]
    /// Only for a `loc:USER` channel.
    public var current: Whereabouts?

    public init(
        channel: String, epoch: String, offset: UInt64, recovered: Bool?, publications: [ChannelPublication], current: Whereabouts? = nil
    ) {
        self.channel = channel
        self.epoch = epoch
        self.offset = offset
        self.recovered = recovered
        self.publications = publications
        self.current = current
    }

    public var result: JSONValue {
        var members: [(String, JSONValue)] = [("channel", .string(channel)), ("epoch", .string(epoch)), ("offset", .integer(offset))]
        if let recovered { members.append(("recovered", .bool(recovered))) }
        members.append(("publications", .array(publications.map(\.listed))))
        if let current { members.append(("current", .object(current.members))) }
        return .object(members)
    }

    /// The result of subscribing to `channel`.
    public init(result: JSONValue, channel: String) throws(WireFormatError) {
        let epoch = try result.requiredString("epoch")
        var publications: [ChannelPublication] = []
        for object in try result.requiredArray("publications") {
            publications.append(try ChannelPublication(json: object, channel: channel, epoch: epoch))
        }
        var current: Whereabouts?
        if let object = result["current"], let owner = LocationChannel.user(in: channel) {
            current = try Whereabouts(json: object, user: owner)
        }
        self.init(
            channel: channel, epoch: epoch, offset: try result.requiredUInt64("offset"), recovered: try result.optionalBool("recovered"),
            publications: publications, current: current)
    }
}

/// The result of `publish`.
public struct PublishResult: Sendable, Equatable {
    public var epoch: String
    public var offset: UInt64
    public var time: Int64
    /// The server had this client id already: nothing new was stored, this is the first copy's position.
    public var duplicate: Bool

    public init(epoch: String, offset: UInt64, time: Int64, duplicate: Bool) {
        self.epoch = epoch
        self.offset = offset
        self.time = time
        self.duplicate = duplicate
    }

    public var result: JSONValue {
        var members: [(String, JSONValue)] = [("epoch", .string(epoch)), ("offset", .integer(offset)), ("time", .integer(time))]
        if duplicate { members.append(("duplicate", .bool(true))) }
        return .object(members)
    }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(
            epoch: try result.requiredString("epoch"), offset: try result.requiredUInt64("offset"), time: try result.requiredInt64("time"),
            duplicate: try result.optionalBool("duplicate") ?? false)
    }
}

/// One page of `history`: newest first.
public struct HistoryPage: Sendable, Equatable {
    public var channel: String
    public var epoch: String
    /// The channel's latest offset.
    public var offset: UInt64
    public var publications: [ChannelPublication]
    /// The `before` for the next, older page; nil when there is nothing older.
    public var nextBefore: UInt64?

    public init(channel: String, epoch: String, offset: UInt64, publications: [ChannelPublication], nextBefore: UInt64?) {
        self.channel = channel
        self.epoch = epoch
        self.offset = offset
        self.publications = publications
        self.nextBefore = nextBefore
    }

    public var result: JSONValue {
        .object([
            ("channel", .string(channel)), ("epoch", .string(epoch)), ("offset", .integer(offset)),
            ("publications", .array(publications.map(\.listed))), ("next_before", nextBefore.map { JSONValue.integer($0) } ?? .null),
        ])
    }

    public init(result: JSONValue) throws(WireFormatError) {
        let channel = try result.requiredString("channel")
        let epoch = try result.requiredString("epoch")
        var publications: [ChannelPublication] = []
        for object in try result.requiredArray("publications") {
            publications.append(try ChannelPublication(json: object, channel: channel, epoch: epoch))
        }
        self.init(
            channel: channel, epoch: epoch, offset: try result.requiredUInt64("offset"), publications: publications,
            nextBefore: try result.optionalUInt64("next_before"))
    }
}

/// The result of `presence`: who of the channel's members is online, sorted.
public struct ChannelPresence: Sendable, Equatable {
    public var channel: String
    public var users: [String]

    public init(channel: String, users: [String]) {
        self.channel = channel
        self.users = users
    }

    public var result: JSONValue { .object([("channel", .string(channel)), ("users", .strings(users))]) }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(channel: try result.requiredString("channel"), users: try result.requiredStrings("users"))
    }
}

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

    public var result: JSONValue {
        .object([("channel", .string(channel)), ("read", .integer(read)), ("unread", .integer(unread)), ("badge", .integer(badge))])
    }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(
            channel: try result.requiredString("channel"), read: try result.requiredUInt64("read"), unread: try result.requiredUInt64("unread"),
            badge: try result.requiredUInt64("badge"))
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

    public var result: JSONValue { .object([("rooms", .array(rooms.map(\.json))), ("total", .integer(total))]) }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(rooms: try result.requiredList("rooms", RoomUnread.init(json:)), total: try result.requiredUInt64("total"))
    }
}
