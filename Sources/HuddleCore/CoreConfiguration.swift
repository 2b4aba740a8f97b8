/// The core's limits. The history limits decide what `apply(.publish)` trims, so every core
/// replaying the same log (a restart, the nodes of a cluster) must use the same history limits
/// to reach the same state.
public struct CoreConfiguration: Sendable {
    public var presenceGraceMilliseconds: Int64 = 5_000
    /// Cluster mode: the core tells the server when a user comes online or goes offline on
    /// this node (`CoreOutput.localPresence`), for the other nodes. Off for a single node,
    /// which has nobody to tell.
    public var tellsLocalPresence = false
    public var maxSubscriptionsPerConnection = 100
    /// A recovery that would return more publications than this reports `recovered: false`.
    public var maxRecoveredPublications = 1000
    /// Failed logins one address may make on one account in the window; then that pair is
    /// refused until the oldest failure leaves the window. Keyed by the pair so that a
    /// stranger's guesses never lock the account's owner out.
    public var loginFailuresPerAccountAndAddress = 5
    /// Failed logins on one account, from any address, after which attempts on it are spaced
    /// `loginAccountBackoffMilliseconds` apart: a distributed guesser is slowed, the owner
    /// (from an address not refused) waits at most that long.
    public var loginFailuresPerAccount = 5
    public var loginAccountBackoffMilliseconds: Int64 = 1_000
    public var loginFailuresPerAddress = 20
    public var loginFailureWindowMilliseconds: Int64 = 15 * 60_000
    /// The `retry_after_ms` given when a login is refused because the attempts still being
    /// verified would reach the limit (no counted failure leaves the window to wait for).
    public var loginInFlightRetryMilliseconds: Int64 = 1_000
    /// Password hashes (PBKDF2, hundreds of milliseconds of a worker each) queued or running,
    /// bounded so that anonymous clients cannot queue unbounded work: signups per client
    /// address (`too_many_attempts`), and signups and logins server-wide (`busy`).
    public var signUpsHashingPerAddress = 4
    public var signUpsHashing = 64
    public var loginsHashing = 256
    /// The `retry_after_ms` of a refusal by one of the hashing bounds above.
    public var hashingRetryMilliseconds: Int64 = 1_000
    /// How long an expired session is kept (so `auth` says `token_expired`, not `invalid_token`)
    /// before `tick` purges it.
    public var expiredSessionRetentionMilliseconds: Int64 = 7 * 24 * 60 * 60_000
    /// Namespaces missing here use `HistoryLimit.standard(for:)`.
    public var history: [ChannelNamespace: HistoryLimit] = Dictionary(
        uniqueKeysWithValues: ChannelNamespace.allCases.map { ($0, HistoryLimit.standard(for: $0)) }
    )
    /// Friendship bounds (protocol.md, "Limits"): they keep every per-user friends set, and
    /// the work a friend-wide fan-out (presence, feed, matches) does, bounded.
    public var maxFriends = 1000
    /// Requests a user may have sent and still waiting.
    public var maxOutgoingFriendRequests = 100
    /// Requests that may wait for one user's answer: beyond it, senders are refused.
    public var maxIncomingFriendRequests = 1000
    /// Bytes of photos a user may own (each distinct photo counted once, at its size): beyond
    /// it uploads are refused `photo_quota_exceeded`. Checked when a request arrives, never
    /// when the log is replayed, so it may change between starts.
    public var photoQuotaBytes = 1 << 30
    /// One export archive (`GET /api/v1/export`) per user per this long: building its JSON
    /// part is the core's work, so a user cannot make the core build it again and again.
    public var exportIntervalMilliseconds: Int64 = 60_000
    /// Friend requests one user may send over time, cancelled ones included (`FriendRequestThrottle`).
    public var friendRequestsPerHour: Double = 20
    public var friendRequestBurst: Double = 20
    /// Friend requests one user may receive over time: 15 at once and 15 a day keep what
    /// strangers can put in an inbox in its 30 days (2 notices a request) under the 1000 it keeps.
    public var friendRequestsReceivedPerDay: Double = 15
    public var friendRequestsReceivedBurst: Double = 15
    /// After a request is cancelled, its sender may not ask the same user again for this long.
    public var friendRequestCooldownMilliseconds: Int64 = 60 * 60_000
    /// At most one friend-request push per recipient in this interval; the inbox holds the others.
    public var friendRequestPushIntervalMilliseconds: Int64 = 60_000
    /// Rooms one user may create, and bytes they may publish to rooms (`RoomQuota`).
    public var roomsCreatedPerHour: Double = 20
    public var roomCreationBurst: Double = 100
    public var roomBytesPerDay = 64 * 1024 * 1024
    public var roomBytesBurst = 16 * 1024 * 1024
    /// The activity list and status lifetimes (protocol.md, "Activities and matches").
    public var activities = ActivitySettings()
    /// Keyed writes (protocol.md, "Retries"): how many first results are kept per user, and
    /// for how long. `apply` trims by both, so replays must use the same values.
    public var keptResultsPerUser = 256
    public var keptResultMilliseconds: Int64 = 24 * 60 * 60_000
    /// How often `tick` forgets expired results of users who made no keyed write since.
    public var keptResultSweepMilliseconds: Int64 = 60 * 60_000

    // Identities.
    /// Identities one account may link.
    public var maxIdentitiesPerUser = 10
    /// ID-token nonces kept spent (each until its token's `exp`): beyond it, sign-ins with a
    /// nonce are refused `busy` until tokens expire. Every core replaying the log must use the same.
    public var maxSpentNonces = 100_000
    /// Of those, what one identity (issuer + subject) may hold: beyond it, its sign-ins with a
    /// nonce are refused `too_many_attempts` until its oldest token expires, and nobody else's.
    /// A person signs in a few times an hour; tokens live an hour at most at the usual providers.
    public var maxSpentNoncesPerIdentity = 20
    public var spentNoncesRetryMilliseconds: Int64 = 60_000
    /// A deleted user's channels are erased in chunks of at most this much work each
    /// (`HuddleCore+ErasureChunks`): a publication looked at or dropped is 1, a channel name
    /// looked at `erasureNameWork`. Only the decider uses them: a replay erases what the log names.
    public var erasureChunkWork = 20_000
    public var erasureNameWork = 20
    /// `account_delete` with an ID token: its `iat` at most this long ago (a fresh sign-in).
    public var freshSignInMilliseconds: Int64 = 5 * 60_000
    /// Sessions (protocol.md, "Sessions"): an `auth` logs the session's new last seen only when
    /// the one recorded is older than this, so reconnecting clients cost the log little.
    public var sessionSeenIntervalMilliseconds: Int64 = 60 * 60_000
    /// Whether the server can mail reset codes (`--password-reset-webhook`): without it
    /// `password_reset_request` and `password_reset` are `unavailable`.
    public var passwordResetEnabled = false

    public init() {}

    func historyLimit(for namespace: ChannelNamespace) -> HistoryLimit {
        history[namespace] ?? HistoryLimit.standard(for: namespace)
    }
}
