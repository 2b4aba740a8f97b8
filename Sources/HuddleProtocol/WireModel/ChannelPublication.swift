/// One publication of a channel (protocol.md, "publication" event and the `publications` of
/// `subscribe` and `history` results), typed.
public struct ChannelPublication: Sendable, Equatable {
    public var channel: String
    public var epoch: String
    public var offset: UInt64
    /// The application's type, `"message"` unless the publisher chose another.
    public var type: String
    /// The publishing user; nil when the server published it (inbox notices, the HTTP API).
    public var from: String?
    public var data: JSONValue
    /// When the server accepted it, in milliseconds since the Unix epoch.
    public var time: Int64
    /// The publisher's retry id, when it gave one.
    public var clientID: String?
    /// A tombstone (protocol.md, "Tombstones"): removed, its offset stays taken; listed as
    /// `{"offset": …, "deleted": true}` with nothing else.
    public var deleted: Bool

    public init(
        channel: String, epoch: String, offset: UInt64, type: String = "message", from: String?, data: JSONValue, time: Int64,
        clientID: String? = nil, deleted: Bool = false
    ) {
        self.deleted = deleted
        self.channel = channel
        self.epoch = epoch
        self.offset = offset
        self.type = type
        self.from = from
        self.data = data
        self.time = time
        self.clientID = clientID
    }

    /// Where this publication sits: what to save to resume after it.
    public var position: Position { Position(epoch: epoch, offset: offset) }

    /// A publication object as `subscribe` and `history` list it: the event's fields without
    /// `event`, `channel` and `epoch`, which the result states once.
    public var listed: JSONValue {
        if deleted { return .object([("offset", .integer(offset)), ("deleted", .bool(true))]) }
        var members: [(String, JSONValue)] = [
            ("offset", .integer(offset)), ("type", .string(type)), ("from", from.map(JSONValue.string) ?? .null), ("data", data),
            ("time", .integer(time)),
        ]
        if let clientID { members.append(("client_id", .string(clientID))) }
        return .object(members)
    }

    /// A publication object as the protocol writes it; `channel` and `epoch` come from the
    /// event itself or, in a result's list, from the result around it.
    public init(json object: JSONValue, channel: String, epoch: String) throws(WireFormatError) {
        if object["deleted"]?.boolValue == true {
            self.init(channel: channel, epoch: epoch, offset: try object.requiredUInt64("offset"), type: "", from: nil, data: .null, time: 0, deleted: true)
            return
        }
        let from = object["from"]
        guard from == nil || from == .null || from?.stringValue != nil else {
            throw WireFormatError("publication `from` is neither a string nor null")
        }
        self.init(
            channel: channel, epoch: epoch, offset: try object.requiredUInt64("offset"), type: try object.requiredString("type"),
            from: from?.stringValue, data: object["data"] ?? .null, time: try object.requiredInt64("time"),
            clientID: try object.optionalString("client_id"))
    }
}
