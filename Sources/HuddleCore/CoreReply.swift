/// The result of one request, as `CoreOutput.reply` carries it.
public enum CoreReply: Sendable, Equatable {
    case failure(CoreError)
    /// signup and login (`isNewSession`: the server adds the token it generated), auth, whoami.
    case account(user: UserInfo, expiresAt: Int64, isNewSession: Bool)
    case revoked(count: Int)
    /// `recovered` is nil when the request had no `since`.
    case subscribed(channel: String, epoch: String, offset: UInt64, recovered: Bool?, publications: [Publication])
    case unsubscribed
    case published(epoch: String, offset: UInt64, time: Int64)
    /// `publications` newest first; `nextBefore` nil when nothing older is kept.
    case history(channel: String, epoch: String, offset: UInt64, publications: [Publication], nextBefore: UInt64?)
    /// Sorted, unique.
    case presence(channel: String, users: [Username])
    case disconnected(count: Int)
    /// A request that changed something and has nothing more to say (`{}`).
    case done
    /// `user_search`: matching usernames in byte order.
    case users([Username])
    /// `friend_request`: `becameFriends` when it crossed a pending request from the other side.
    case friendRequestSent(becameFriends: Bool)
    /// Both newest first.
    case friendRequests(incoming: [FriendRequest], outgoing: [FriendRequest])
    /// Sorted by username.
    case friends([FriendStatus])
    /// A publish retried with a `client_id` already kept: the first publication's position;
    /// nothing was stored or delivered.
    case alreadyPublished(epoch: String, offset: UInt64, time: Int64)
    /// `mark_read`: where the marker is now, what is left unread there, and the user's badge.
    case readMarker(channel: String, read: UInt64, unread: UInt64, badge: UInt64)
    /// `unread`: rooms sorted by channel name; `total` is the badge.
    case unread(rooms: [RoomUnread], total: UInt64)

    // Feed.

    // Push.

    // Activities.

    // Places.

    // Memories.
    /// `memory_create`, `memory_update` (without points) and `memory` (with them).
    case memory(Memory, includingPoints: Bool)
    /// `memories`: newest date first, without points.
    case memories([Memory])
    /// `point_add`, `point_update`.
    case memoryPoint(memory: UInt64, MemoryPoint)
}
