import HuddleProtocol

/// The result of `subscribe`. The recovered publications are not here: they arrive as
/// `publication` events, before this result and before any later live publication.
public struct SubscribeResult: Sendable, Equatable {
    public var channel: String
    public var epoch: String
    /// The channel's latest offset (0 when it has none yet).
    public var offset: UInt64
    /// nil without `since`; false when publications after `since` could not be replayed.
    public var recovered: Bool?
    /// How many recovered publications were delivered as events (duplicates left out).
    public var delivered: Int

    public init(channel: String, epoch: String, offset: UInt64, recovered: Bool?, delivered: Int) {
        self.channel = channel
        self.epoch = epoch
        self.offset = offset
        self.recovered = recovered
        self.delivered = delivered
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

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> PublishResult {
        PublishResult(
            epoch: try result.requiredString("epoch"), offset: try result.requiredUInt64("offset"),
            time: try result.requiredInt64("time"), duplicate: try result.optionalBool("duplicate") ?? false)
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

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> HistoryPage {
        let channel = try result.requiredString("channel")
        let epoch = try result.requiredString("epoch")
        var publications: [ChannelPublication] = []
        for object in try result.requiredArray("publications") {
            publications.append(try ChannelPublication.decode(object, channel: channel, epoch: epoch))
        }
        return HistoryPage(
            channel: channel, epoch: epoch, offset: try result.requiredUInt64("offset"), publications: publications,
            nextBefore: try result.optionalUInt64("next_before"))
    }
}
