import HuddleProtocol

/// The result of one request, as `CoreOutput.reply` carries it.
///
/// The first results of keyed writes are logged and snapshotted (`CoreCommand.keepResult`), as
/// `CoreReply+Persisted` spells them.
public indirect enum CoreReply: Sendable, Equatable {
    case failure(CoreError)
    /// `identities`, `identity_link`, `identity_unlink`: the account's identities, oldest first.
    case identities([LinkedIdentity])
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
    /// `user_search`: matching usernames (by username in byte order, then by display name);
    /// `profiles`: theirs that are set.
    case users([Username], profiles: Profiles = Profiles())
    /// `friend_request`: `becameFriends` when it crossed a pending request from the other side.
    case friendRequestSent(becameFriends: Bool)
    /// Both newest first; `profiles`: the other sides' that are set.
    case friendRequests(incoming: [FriendRequest], outgoing: [FriendRequest], profiles: Profiles = Profiles())
    /// Sorted by username.
    case friends([FriendStatus])
    /// A publish retried with a `client_id` already kept: the first publication's position;
    /// nothing was stored or delivered.
    case alreadyPublished(epoch: String, offset: UInt64, time: Int64)
    /// A keyed write retried with a `client_id` whose result is kept: that first result, sent
    /// again with `duplicate: true`; nothing was changed or delivered.
    case duplicate(CoreReply)
    /// `mark_read`: where the marker is now, what is left unread there, and the user's badge.
    case readMarker(channel: String, read: UInt64, unread: UInt64, badge: UInt64)
    /// `unread`: rooms sorted by channel name; `total` is the badge.
    case unread(rooms: [RoomUnread], total: UInt64)

    // Feed.
    /// `post`: the new post.
    case feedPost(FeedPost)
    /// `feed`: newest first; `nextBefore` nil when nothing older is visible.
    case feedPage(posts: [FeedPost], nextBefore: UInt64?)
    /// `like`: whether the caller likes the post now, and its like count.
    case postLike(post: UInt64, liked: Bool, likes: Int)
    /// `comment`: the new comment and the post's comment count now.
    case postComment(post: UInt64, comment: FeedComment, comments: Int)
    /// `comments`: newest first; `nextBefore` nil when nothing older is kept.
    case postComments(post: UInt64, comments: [FeedComment], nextBefore: UInt64?)

    // Activities.

    /// `activities`: the configured list and the caller's statuses that are on, in list order.
    case activities(available: [String], mine: [ActivityStatus])
    /// `activity_on`: the status as it now is.
    case activityStatus(ActivityStatus)
    /// `matches`: the caller's current matches, in the order asked for.
    case matches([ActivityMatch])

    // Places.
    /// `place_set`: the place as stored.
    case place(Place)
    /// `places`: the caller's own, by id.
    case places([Place])
    /// `location_fix`, `region`: the decided place now, whether this report changed it, and
    /// whether it was ignored (not newer than the last accepted report).
    case location(DecidedPlace, changed: Bool, ignored: Bool)
    /// `where`.
    case whereabouts(user: Username, DecidedPlace)
    /// `subscribe` to a `loc:` channel: as `subscribed`, plus the owner's place now, so a
    /// follower sees it at once however old the last `place` publication is.
    case locationSubscribed(channel: String, epoch: String, offset: UInt64, recovered: Bool?, publications: [Publication], current: DecidedPlace)

    // Memories.
    /// `memory_create`, `memory_update` (without points) and `memory` (with them).
    case memory(StoredMemory, includingPoints: Bool)
    /// `memories`: newest date first, without points.
    case memories([StoredMemory])
    /// `point_add`, `point_update`.
    case memoryPoint(memory: UInt64, MemoryPoint)
    /// A result without points (`memory_update`), as kept for a retry: the memory with its
    /// points left out, so a kept result stays small, and how many it had.
    case keptMemory(StoredMemory, pointCount: Int)

    // Profiles and sessions.
    /// `profile`, `profile_set`: the caller's own.
    case profile(user: Username, UserProfile)
    /// `sessions`: most recently seen first, at most `HuddleCore.maxListedSessions`; `total` all of them.
    case sessions([SessionEntry], total: Int)
    // Reports.
    /// `report`: the new report's id.
    case reportFiled(id: UInt64)
    /// `GET /api/v1/reports`.
    case reports(ReportPage)
    /// `account_export`: the caller's data (`HuddleCore+Export`).
    case export(JSONValue)
}
