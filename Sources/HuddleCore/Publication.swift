/// One message of a channel, as delivered live and returned by recovery and history.
public struct Publication: Sendable, Equatable {
    public var channel: String
    public var epoch: String
    public var offset: UInt64
    public var type: String
    /// nil when the server published it (HTTP API, server features).
    public var from: Username?
    /// Serialized JSON, opaque to the core: the server splices it into frames verbatim.
    public var data: String
    /// When the core accepted it, milliseconds since the Unix epoch.
    public var time: Int64
    /// The publisher's `client_id`, if it gave one.
    public var clientID: String?
    /// A tombstone: the publication was removed, its offset stays taken (type, from and data
    /// are empty).
    public var removed: Bool

    public init(
        channel: String, epoch: String, offset: UInt64, type: String, from: Username?, data: String, time: Int64,
        clientID: String? = nil, removed: Bool = false
    ) {
        self.clientID = clientID
        self.removed = removed
        self.channel = channel
        self.epoch = epoch
        self.offset = offset
        self.type = type
        self.from = from
        self.data = data
        self.time = time
    }
}
