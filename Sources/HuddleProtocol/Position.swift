/// A place in a channel's stream (protocol.md, "Offsets and epochs"): an offset means something
/// only within its epoch.
public struct Position: Sendable, Equatable {
    public var epoch: String
    public var offset: UInt64

    public init(epoch: String, offset: UInt64) {
        self.epoch = epoch
        self.offset = offset
    }
}
