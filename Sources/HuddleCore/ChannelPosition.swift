/// A point in a channel's stream: the last publication a client processed (protocol.md,
/// "Offsets and epochs"). Offsets only mean something within their epoch.
public struct ChannelPosition: Sendable, Equatable, Codable {
    public var epoch: String
    public var offset: UInt64

    public init(epoch: String, offset: UInt64) {
        self.epoch = epoch
        self.offset = offset
    }
}
