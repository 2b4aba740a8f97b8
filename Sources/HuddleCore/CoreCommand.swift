import HuddleProtocol

/// A durable state change: what the write-ahead log records and a replay re-applies.
///
/// `HuddleCore.apply(_:)` is a pure function of (state, command): everything it needs — time,
/// hashes, the session's expiry — travels inside the command. The case and label names are the
/// log's field names (synthesized Codable), so they must never be renamed.
public enum CoreCommand: Sendable, Equatable {
    case signUp(username: Username, email: String, credentials: Credentials, session: NewSession, time: Int64)
    case openSession(username: Username, session: NewSession, time: Int64)
    /// The exact sessions revoked by a logout; hashes of other users' sessions are ignored.
    case revokeSessions(username: Username, tokenHashes: [[UInt8]], time: Int64)
    /// Sessions expired long enough ago (`CoreConfiguration.expiredSessionRetentionMilliseconds`)
    /// to be forgotten; emitted by `tick`.
    case purgeExpiredSessions(tokenHashes: [[UInt8]], time: Int64)
    /// `data` is serialized JSON, opaque to the core; `from` is nil for the server.
    case publish(channel: String, from: Username?, type: String, data: String, time: Int64)

    // Friends. Each is logged together with the inbox notices (`publish` to `inbox:USER`) it
    // caused, in the same turn.

    /// The publications of `channels` past their namespace's age limit at `time` are dropped:
    /// unreadable already, they would otherwise be kept until the channel's next publication.
    case trimExpiredHistory(channels: [String], time: Int64)
    /// `from` asked `to` to be friends; never logged between friends or with a request pending.
    case sendFriendRequest(from: Username, to: Username, message: String, time: Int64)
    /// The two become friends: `to` accepted `from`'s request, or `to`'s own request crossed
    /// one from `from`. Pending requests between them either way are gone.
    case acceptFriendRequest(from: Username, to: Username, time: Int64)
    /// The request from `from` to `to` is gone unanswered: declined by `to` or cancelled by `from`.
    case dropFriendRequest(from: Username, to: Username, time: Int64)
    /// `user` ended the friendship with `friend`.
    case removeFriend(user: Username, friend: Username, time: Int64)

    // Chat.

    /// A publication carrying the publisher's own id (`client_id`), which makes a retried
    /// publish idempotent; otherwise as `publish`.
    case publishWithClientID(channel: String, from: Username?, type: String, data: String, clientID: String, time: Int64)
    /// `user` has read `channel` up to `offset` (never backwards: `handle` only logs advances).
    case markRead(user: Username, channel: String, offset: UInt64, time: Int64)

    // Feed.

    /// A post with the id the feed's counter gave it; beyond the author's bound it drops the
    /// author's oldest post.
    case createPost(id: UInt64, author: Username, text: String, activity: String?, at: Int64?, time: Int64)
    /// `user` likes the post (`liked`) or no longer does; never logged when nothing changes.
    case setLike(post: UInt64, user: Username, liked: Bool, time: Int64)
    /// A comment with the id the post's counter gave it.
    case addComment(post: UInt64, id: UInt64, author: Username, text: String, time: Int64)
    /// The author deleted the post, with its likes and comments.
    case deletePost(post: UInt64, author: Username, time: Int64)

    // Activities.
    /// `user` turned `activity` on, or changed it while on (a status still on keeps its
    /// `since`). `audience`: nil for every friend, else the chosen friends, sorted. Match
    /// changes it caused are logged as `startMatch`/`endMatch` after it, with their notices.
    case setActivity(user: Username, activity: String, audience: [Username]?, expiresAt: Int64, time: Int64)
    /// The status is gone: turned off, or expired (`expireActivities` logs that, so a replay
    /// never reads a clock).
    case clearActivity(user: Username, activity: String, reason: ActivityEndReason, time: Int64)
    /// The two (`user` < `partner`) matched on `activity` at `time`.
    case startMatch(user: Username, partner: Username, activity: String, time: Int64)
    /// Their match on `activity` is over.
    case endMatch(user: Username, partner: Username, activity: String, reason: ActivityEndReason, time: Int64)

    // Places.
    // Places: the decisions travel in the commands, so a replay never re-runs the geometry.

    /// Creates or replaces (same id) one of `user`'s places.
    case setPlace(user: Username, place: Place, time: Int64)
    case removePlace(user: Username, placeID: UInt64, time: Int64)
    /// The location decided after an accepted observation (fix or region event). Logged with
    /// the `place` publication on `loc:USER` when the decided place changed.
    case updateLocation(user: Username, location: LocationState, time: Int64)

    // Memories.
    // Every memory command names the owner; `apply` ignores one whose memory is not the
    // owner's (never logged so: `handle` checks first).

    /// A new memory with the id `handle` drew from `Memories.nextID`.
    case createMemory(owner: Username, id: UInt64, title: String, date: String, placeName: String, position: MemoryPosition?, time: Int64)
    /// The memory's fields as they are now (all of them, so a replay needs no merging).
    case updateMemory(owner: Username, id: UInt64, title: String, date: String, placeName: String, position: MemoryPosition?, time: Int64)
    /// The memory and its points are gone; the photos stay owned.
    case deleteMemory(owner: Username, id: UInt64, time: Int64)
    /// Adds the point (a new id from `StoredMemory.nextPointID`) or, with an existing id, replaces it.
    case putMemoryPoint(owner: Username, memory: UInt64, point: MemoryPoint, time: Int64)
    case deleteMemoryPoint(owner: Username, memory: UInt64, point: UInt64, time: Int64)
    /// `owner` uploaded the photo with this hash; its bytes are in the data directory already.
    case addPhotoOwner(owner: Username, hash: String, size: Int, time: Int64)

    // Keyed writes.
    /// The first result of `user`'s `op` sent with `clientID`, logged after the commands of
    /// the write itself in the same turn, so the effect and its key are durable together.
    case keepResult(user: Username, op: String, clientID: String, reply: CoreReply, time: Int64)
    /// Every kept result older than `before` is forgotten; emitted by `tick`.
    case forgetKeptResults(before: Int64, time: Int64)

    // Identities.
    /// A first sign-in with `identity` made the account: no password; `email` is "" when the
    /// token had no verified one. The session follows as `openSession`.
    case createIdentityAccount(username: Username, email: String, identity: LinkedIdentity, time: Int64)
    case linkIdentity(username: Username, identity: LinkedIdentity, time: Int64)
    case unlinkIdentity(username: Username, issuer: String, subject: String, time: Int64)
    /// An ID token's nonce, spent until the token's `exp` (milliseconds), by the identity
    /// `subject` names at `issuer` (nil in records logged before it was recorded).
    case spendNonce(issuer: String, subject: String?, nonce: String, expiresAt: Int64, time: Int64)
    // Profiles and sessions.
    /// The user's whole profile now (nil: unset); the avatar is a photo the user owned then.
    case setProfile(user: Username, displayName: String?, avatar: String?, time: Int64)
    /// A sign-in used the session at `time` (its last seen); logged at most once per session
    /// per `CoreConfiguration.sessionSeenIntervalMilliseconds`.
    case seeSession(username: Username, tokenHash: [UInt8], time: Int64)

    // Passwords.
    /// `password_change`: the user's new verifier.
    case setCredentials(username: Username, credentials: Credentials, time: Int64)
    /// A reset code for the user (its SHA-256), replacing any earlier one.
    case issuePasswordReset(username: Username, codeHash: [UInt8], expiresAt: Int64, time: Int64)
    /// A wrong code tried against the user's; at `HuddleCore.resetAttemptsPerCode` the code is gone.
    case failPasswordReset(username: Username, time: Int64)
    /// The reset code was used: the user's new verifier, and the code gone.
    case resetPassword(username: Username, credentials: Credentials, time: Int64)
    // Blocking. A block is logged after the commands that undid what the two had (the
    // friendship, requests either way, with their notices), in the same turn.
    case block(user: Username, blocked: Username, time: Int64)
    /// Restores nothing: the friendship and requests the block removed stay gone.
    case unblock(user: Username, blocked: Username, time: Int64)

    // Moderation.
    /// The operator suspended `user` (again: the new reason and end replace the old); their
    /// live connections close on every node.
    case suspend(user: Username, reason: String, until: Int64?, time: Int64)
    case unsuspend(user: Username, time: Int64)
    /// A user's report, its content captured as `handle` found it (the report's id from
    /// `Reports.lastID`).
    case fileReport(ModerationReport)
    case resolveReport(id: UInt64, action: String, note: String, time: Int64)
    // Moderation and deletion.
    /// The publication at `offset` becomes a tombstone (`Channel.remove(at:)`): removed by the
    /// operator, or as one its deleted publisher wrote.
    case removePublication(channel: String, offset: UInt64, time: Int64)
    /// The account is deleted: every state component erases the user (`HuddleCore.eraseUser`),
    /// the username is quarantined, and the user's channels wait for `eraseChannels` chunks
    /// (`PendingErasures`). Logged after the `removeFriend`s that told the friends.
    case eraseUser(username: Username, time: Int64)
    /// A chunk of a deleted user's channels, named by the node that decided it: those that were
    /// the user's own or 1:1 go whole, in the others the user's publications become tombstones.
    case eraseChannels(username: Username, channels: [String], time: Int64)
    /// The user's channels are all erased: the erasure is no longer pending.
    case finishErasure(username: Username, time: Int64)
    /// The operator removed the comment (the post's comment counter stays).
    case removeComment(post: UInt64, comment: UInt64, time: Int64)
}
