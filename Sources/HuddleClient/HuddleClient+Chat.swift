import HuddleProtocol

/// protocol.md "Chat": read markers, unread counts, typing. Messages themselves are
/// publications on `ChatRoom.name(a, b)`: `subscribe`, `publish`, `history`.
extension HuddleClient {
    /// `mark_read`: the caller has read `channel` up to `offset`.
    public func markRead(_ channel: String, offset: UInt64, completion: @escaping (Result<ReadMarker, HuddleClientError>) -> Void) {
        request("mark_read", [("channel", .string(channel)), ("offset", .integer(offset))],
                decode: { result throws(HuddleClientError) in
                    ReadMarker(
                        channel: try result.requiredString("channel"), read: try result.requiredUInt64("read"),
                        unread: try result.requiredUInt64("unread"), badge: try result.requiredUInt64("badge"))
                }, completion: completion)
    }

    /// `unread`: the caller's rooms holding publications, by name, and the badge.
    public func unread(completion: @escaping (Result<UnreadSummary, HuddleClientError>) -> Void) {
        request("unread", resendAfterReconnect: true, decode: { result throws(HuddleClientError) in
            var rooms: [RoomUnread] = []
            for object in try result.requiredArray("rooms") {
                rooms.append(RoomUnread(
                    channel: try object.requiredString("channel"), offset: try object.requiredUInt64("offset"),
                    read: try object.requiredUInt64("read"), unread: try object.requiredUInt64("unread")))
            }
            return UnreadSummary(rooms: rooms, total: try result.requiredUInt64("total"))
        }, completion: completion)
    }

    /// `typing`: the other member's connections get a `typing` event. Not resent: a typing
    /// indicator that comes late is worse than none.
    public func typing(in channel: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request("typing", [("channel", .string(channel))], decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }
}
