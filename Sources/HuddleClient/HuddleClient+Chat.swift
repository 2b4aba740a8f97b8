import HuddleProtocol

/// protocol.md "Chat": read markers, unread counts, typing. Messages themselves are
/// publications on `ChatRoom.name(a, b)`: `subscribe`, `publish`, `history`.
extension HuddleClient {
    /// `mark_read`: the caller has read `channel` up to `offset`.
    public func markRead(_ channel: String, offset: UInt64, completion: @escaping (Result<ReadMarker, HuddleClientError>) -> Void) {
        request(.markRead(channel: channel, offset: offset),
                reading: ReadMarker.init(result:), completion: completion)
    }

    /// `unread`: the caller's rooms holding publications, by name, and the badge.
    public func unread(completion: @escaping (Result<UnreadSummary, HuddleClientError>) -> Void) {
        request(.unread, resendAfterReconnect: true, reading: UnreadSummary.init(result:), completion: completion)
    }

    /// `typing`: the other member's connections get a `typing` event. Not resent: a typing
    /// indicator that comes late is worse than none.
    public func typing(in channel: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.typing(channel: channel), decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }
}
