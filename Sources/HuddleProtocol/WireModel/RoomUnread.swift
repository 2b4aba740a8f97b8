/// One chat room in the `unread` answer: its newest offset, how far the user read, and the
/// difference.
public struct RoomUnread: Sendable, Equatable {
    public var channel: String
    public var offset: UInt64
    public var read: UInt64
    public var unread: UInt64

    public init(channel: String, offset: UInt64, read: UInt64, unread: UInt64) {
        self.channel = channel
        self.offset = offset
        self.read = read
        self.unread = unread
    }

    public var json: JSONValue {
        .object([("channel", .string(channel)), ("offset", .integer(offset)), ("read", .integer(read)), ("unread", .integer(unread))])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(
            channel: try json.requiredString("channel"), offset: try json.requiredUInt64("offset"), read: try json.requiredUInt64("read"),
            unread: try json.requiredUInt64("unread"))
    }
}
