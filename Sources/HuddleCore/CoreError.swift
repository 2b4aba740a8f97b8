/// A refused request: one of protocol.md's stable error codes and a message for humans.
public struct CoreError: Error, Sendable, Equatable {
    public var code: CoreErrorCode
    public var message: String
    /// Set with `too_many_attempts`, `busy` and the budgets over time (`friend_requests_limited`,
    /// `request_cooldown`, `too_many_rooms`, `storage_quota`): how long until a retry can pass.
    public var retryAfterMilliseconds: Int64?

    public init(_ code: CoreErrorCode, _ message: String, retryAfterMilliseconds: Int64? = nil) {
        self.code = code
        self.message = message
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }
}

/// The error codes the core produces, spelled exactly as protocol.md's "Errors" section.
/// The general errors that only the server can detect (bad_json, rate_limited, …) are not here.
public enum CoreErrorCode: String, Sendable, CaseIterable {
    case notAuthenticated = "not_authenticated"
    case invalidUsername = "invalid_username"
    case invalidEmail = "invalid_email"
    case weakPassword = "weak_password"
    case usernameTaken = "username_taken"
    case emailTaken = "email_taken"
    case alreadyAuthenticated = "already_authenticated"
    case invalidCredentials = "invalid_credentials"
    case tooManyAttempts = "too_many_attempts"
    /// Something the server must ask before it can answer is out of reach (cluster mode's
    /// Redis, for the login limit shared by the nodes); the server says so, the core voices it.
    case unavailable = "unavailable"
    /// A server-wide bound is full (password hashes waiting), or a `publish` while a reader of
    /// the channel is behind (protocol.md, "Backpressure"); has `retry_after_ms`.
    case busy = "busy"
    case invalidToken = "invalid_token"
    case tokenExpired = "token_expired"
    case invalidChannel = "invalid_channel"
    case forbidden = "forbidden"
    case tooManySubscriptions = "too_many_subscriptions"
    case notSubscribed = "not_subscribed"
    case badRequest = "bad_request"
    case userNotFound = "user_not_found"
    case selfRequest = "self_request"
    case alreadyFriends = "already_friends"
    case alreadyRequested = "already_requested"
    case noRequest = "no_request"
    case notFriends = "not_friends"
    case tooManyFriends = "too_many_friends"
    case tooManyRequests = "too_many_requests"
    case friendRequestsLimited = "friend_requests_limited"
    case requestCooldown = "request_cooldown"
    // Rooms.
    case tooManyRooms = "too_many_rooms"
    case storageQuota = "storage_quota"
    // Feed.
    case postNotFound = "post_not_found"
    case alreadyLiked = "already_liked"
    case notLiked = "not_liked"
    // Activities.
    case unknownActivity = "unknown_activity"
    case notOn = "not_on"
    // Places.
    case placeNotFound = "place_not_found"
    case tooManyPlaces = "too_many_places"
    // Memories.
    case memoryNotFound = "memory_not_found"
    case pointNotFound = "point_not_found"
    case photoNotFound = "photo_not_found"
    case tooManyMemories = "too_many_memories"
    case tooManyPoints = "too_many_points"
    case tooManyPhotos = "too_many_photos"
    case photoQuotaExceeded = "photo_quota_exceeded"
    // Identities.
    /// An ID token or app token that is malformed, unsigned, signed with another key or algorithm.
    case invalidIdentityToken = "invalid_identity_token"
    /// Past its `exp`, before its `nbf`, or issued (`iat`) in the future.
    case identityTokenExpired = "identity_token_expired"
    case wrongAudience = "wrong_audience"
    case unknownIssuer = "unknown_issuer"
    /// The token names a key (`kid`) its issuer's key set does not hold, even refreshed.
    case unknownKey = "unknown_key"
    case nonceReused = "nonce_reused"
    /// The identity signs into another account already.
    case identityTaken = "identity_taken"
    case identityNotFound = "identity_not_found"
    /// Unlinking would leave the account with no way to sign in (no password, no other identity).
    case lastSignInMethod = "last_sign_in_method"
    case tooManyIdentities = "too_many_identities"
    // Profiles and sessions.
    case invalidDisplayName = "invalid_display_name"
    case sessionNotFound = "session_not_found"
    case invalidCode = "invalid_code"
    // Blocking.
    case alreadyBlocked = "already_blocked"
    case notBlocked = "not_blocked"
    case userBlocked = "user_blocked"
    case tooManyBlocks = "too_many_blocks"
    // Moderation.
    case accountSuspended = "account_suspended"
    case notSuspended = "not_suspended"
    case reportNotFound = "report_not_found"
    case alreadyReported = "already_reported"
    case alreadyResolved = "already_resolved"
    case tooManyReports = "too_many_reports"
    case reportsLimited = "reports_limited"
    case contentNotFound = "content_not_found"
    // Moderation and deletion.
    case publicationNotFound = "publication_not_found"
    case commentNotFound = "comment_not_found"
    // Export.
    case exportsLimited = "exports_limited"
}
