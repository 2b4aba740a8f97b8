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
    /// For a `loc:USER` channel: where USER is now (also delivered as `HuddleEvent.whereabouts`).
    public var current: Whereabouts?

    public init(channel: String, epoch: String, offset: UInt64, recovered: Bool?, delivered: Int, current: Whereabouts? = nil) {
        self.channel = channel
        self.epoch = epoch
        self.offset = offset
        self.recovered = recovered
        self.delivered = delivered
        self.current = current
    }
}
