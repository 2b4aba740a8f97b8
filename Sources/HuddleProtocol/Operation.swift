/// A request's op and its arguments, checked for presence and type (protocol.md, "Ops").
/// Values the core owns (username rules, channel names, token formats) are not checked here.
public enum Operation: Sendable, Equatable {
    case ping
    case signup(username: String, email: String, password: String, device: String?)
    case login(login: String, password: String, device: String?)
    case auth(token: String)
    /// `all`: revoke every session of the user, not only this connection's.
    case logout(all: Bool)
    case whoami
    case subscribe(channel: String, since: Position?)
    case unsubscribe(channel: String)
    /// `data` is the compact serialization of the parsed value: normalized, and what was
    /// size-checked against `ProtocolLimits.maxDataBytes`.
    /// Its `client_id`, if any, is the request's (`ClientRequest.clientID`).
    case publish(channel: String, type: String, data: String)
    /// `before`: only offsets below it (nil: from the newest); `limit` already defaulted and
    /// range-checked.
    case history(channel: String, before: UInt64?, limit: Int)
    case presence(channel: String)
    /// `limit` already defaulted and range-checked.
    case userSearch(prefix: String, limit: Int)
    /// `message` defaults to "" and is at most `ProtocolLimits.maxFriendMessageLength` characters.
    case friendRequest(user: String, message: String)
    case friendRequests
    case friendAccept(user: String)
    case friendDecline(user: String)
    case friendCancel(user: String)
    case friendRemove(user: String)
    case friends
    case markRead(channel: String, offset: UInt64)
    case unread
    case typing(channel: String)

    // Feed.
    /// `text` 1–`maxPostLength` characters; `activity` 1–`maxActivityLength`; `at` a time in
    /// milliseconds, not negative.
    case post(text: String, activity: String?, at: Int64?)
    /// `before`: only post ids below it (nil: from the newest); `limit` defaulted and checked.
    case feed(before: UInt64?, limit: Int)
    /// `liked` nil toggles the caller's like.
    case like(post: UInt64, liked: Bool?)
    /// `text` 1–`maxCommentLength` characters.
    case comment(post: UInt64, text: String)
    /// `before`: only comment ids below it; `limit` defaulted and checked.
    case comments(post: UInt64, before: UInt64?, limit: Int)
    case postDelete(post: UInt64)

    // Activities.
    case activities
    /// `friends` nil: every friend; otherwise 1–256 names as typed. `expiresIn` in seconds, range-checked by the core.
    case activityOn(activity: String, friends: [String]?, expiresIn: Int64?)
    case activityOff(activity: String)
    /// `byActivity`: `order` was "activity" (default "time").
    case matches(byActivity: Bool)

    // Places.
    /// Coordinates in degrees and radius in metres, as sent: the core judges their ranges.
    /// `id` is the `place_id` argument (the top-level `id` is the request's).
    case placeSet(id: UInt64?, label: String, latitude: Double, longitude: Double, radius: Double)
    case placeRemove(id: UInt64)
    case places(user: String?)
    /// `time`: when the phone took the fix, milliseconds since the Unix epoch.
    case locationFix(latitude: Double, longitude: Double, accuracy: Double, time: Int64)
    /// `entered`: the `enter` event (else `exit`).
    case region(placeID: UInt64, entered: Bool, time: Int64)
    /// `where`.
    case whereIs(user: String)

    // Memories.
    /// `title` and `date` given; everything else as sent (the core judges the values).
    case memoryCreate(MemoryArguments)
    /// At least one field given.
    case memoryUpdate(memory: UInt64, MemoryArguments)
    case memoryDelete(memory: UInt64)
    case memories
    case memory(memory: UInt64)
    /// `time` given.
    case pointAdd(memory: UInt64, MemoryPointArguments)
    /// At least one field given.
    case pointUpdate(memory: UInt64, point: UInt64, MemoryPointArguments)
    case pointDelete(memory: UInt64, point: UInt64)

    // Identities.
    /// An OpenID Connect ID token; `username` for a first sign-in (else one is proposed from the token).
    case identitySignIn(token: String, nonce: String?, username: String?, device: String?)
    /// Links the ID token's identity to the signed-in account.
    case identityLink(token: String, nonce: String?)
    case identityUnlink(issuer: String, subject: String)
    case identities
    /// A JWT signed by the app's backend naming the user (`sub`).
    case appAuth(token: String, device: String?)
    // Profiles and sessions.
    case profile
    /// Each nil when not given (unchanged); "" clears. At least one is given.
    case profileSet(displayName: String?, avatar: String?)
    case sessions
    /// `id` as `sessions` lists it (not a token).
    case sessionRevoke(id: String)
    /// `revokeOthers`: also revoke every other session of the caller.
    case passwordChange(oldPassword: String, newPassword: String, revokeOthers: Bool)
    /// `login` is a username or an email address.
    case passwordResetRequest(login: String)
    case passwordReset(login: String, code: String, newPassword: String)
    // Blocking.
    case block(user: String)
    case unblock(user: String)
    case blocks

    // Reports.
    /// `reason` one of `ReportVocabulary.reasons`; `text` at most `maxTextLength` characters.
    case report(target: ReportTarget, reason: String, text: String)
    // Moderation and deletion.
    /// Deletes the caller's account; `password` proves it is theirs.
    case accountDelete(password: String)
    /// `account_delete` proven by a fresh sign-in instead: an ID token of one of the caller's
    /// identities (for accounts with no password).
    case accountDeleteWithIdentity(token: String, nonce: String?)
    /// Everything Huddle holds about the caller.
    case accountExport
    /// Whether the op takes a `client_id` (`KeyedWrites`).
    public var isKeyedWrite: Bool { KeyedWrites.ops.contains(name) }

    /// The op as it is spelled on the wire, for metrics labels and logs.
    public var name: String {
        switch self {
        case .ping: return "ping"
        case .signup: return "signup"
        case .login: return "login"
        case .auth: return "auth"
        case .logout: return "logout"
        case .whoami: return "whoami"
        case .subscribe: return "subscribe"
        case .unsubscribe: return "unsubscribe"
        case .publish: return "publish"
        case .history: return "history"
        case .presence: return "presence"
        case .userSearch: return "user_search"
        case .friendRequest: return "friend_request"
        case .friendRequests: return "friend_requests"
        case .friendAccept: return "friend_accept"
        case .friendDecline: return "friend_decline"
        case .friendCancel: return "friend_cancel"
        case .friendRemove: return "friend_remove"
        case .friends: return "friends"
        case .markRead: return "mark_read"
        case .unread: return "unread"
        case .typing: return "typing"
        // Feed.
        case .post: return "post"
        case .feed: return "feed"
        case .like: return "like"
        case .comment: return "comment"
        case .comments: return "comments"
        case .postDelete: return "post_delete"
        // Activities.
        case .activities: return "activities"
        case .activityOn: return "activity_on"
        case .activityOff: return "activity_off"
        case .matches: return "matches"
        // Places.
        case .placeSet: return "place_set"
        case .placeRemove: return "place_remove"
        case .places: return "places"
        case .locationFix: return "location_fix"
        case .region: return "region"
        case .whereIs: return "where"
        // Memories.
        case .memoryCreate: return "memory_create"
        case .memoryUpdate: return "memory_update"
        case .memoryDelete: return "memory_delete"
        case .memories: return "memories"
        case .memory: return "memory"
        case .pointAdd: return "point_add"
        case .pointUpdate: return "point_update"
        case .pointDelete: return "point_delete"
        // Identities.
        case .identitySignIn: return "identity_signin"
        case .identityLink: return "identity_link"
        case .identityUnlink: return "identity_unlink"
        case .identities: return "identities"
        case .appAuth: return "app_auth"
        // Profiles and sessions.
        case .profile: return "profile"
        case .profileSet: return "profile_set"
        case .sessions: return "sessions"
        case .sessionRevoke: return "session_revoke"
        case .passwordChange: return "password_change"
        case .passwordResetRequest: return "password_reset_request"
        case .passwordReset: return "password_reset"
        // Blocking.
        case .block: return "block"
        case .unblock: return "unblock"
        case .blocks: return "blocks"
        // Reports.
        case .report: return "report"
        // Moderation and deletion.
        case .accountDelete, .accountDeleteWithIdentity: return "account_delete"
        case .accountExport: return "account_export"
        }
    }
}
