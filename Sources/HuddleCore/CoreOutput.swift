import HuddleProtocol

/// Something the server must do after a request: send a reply or an event, verify a password,
/// close connections.
public enum CoreOutput: Sendable, Equatable {
    /// A nil connection is an HTTP API request; the server routes it by `requestID`.
    case reply(ConnectionRef?, requestID: String?, CoreReply)
    /// A live `publication` event for these subscribers, sorted.
    case deliver(Publication, to: [ConnectionRef])
    /// An ephemeral `typing` event for these connections (the other member's), sorted.
    case typing(channel: String, user: Username, to: [ConnectionRef])
    /// A `presence` event for these connections (the user's friends'), sorted.
    case presenceChanged(user: Username, online: Bool, to: [ConnectionRef])
    /// Cluster mode (`CoreConfiguration.tellsLocalPresence`): the user came online on this
    /// node (a first connection here) or went offline here (the grace after the last one
    /// ended). The server tells the other nodes, which submit `presenceElsewhere`.
    case localPresence(user: Username, online: Bool)
    /// Run PBKDF2 off the core thread, then send `CoreRequest.finishLogin` with the same
    /// connection, request ID, username and address. Credentials nil: the login names no
    /// account; hash with the cost of a new password anyway (its answer must take as long as a
    /// wrong password's) and report no match.
    case verifyPassword(ConnectionRef, requestID: String, username: Username?, credentials: Credentials?, password: String, address: String)
    /// A signup passed every rule: hash its password off the core thread (behind any login
    /// waiting for a worker), then send `CoreRequest.signUp`.
    case hashNewPassword(ConnectionRef, requestID: String, username: String, email: String, password: String, address: String)
    /// Close these connections, sorted. The core has already forgotten them: their later
    /// `connectionClosed` and any request still queued from them are ignored.
    case closeConnections([ConnectionRef], code: UInt16, reason: String)
    /// A header or subprotocol token was accepted: push a `session` event.
    case sessionAccepted(ConnectionRef, user: UserInfo, expiresAt: Int64)
    /// A header or subprotocol token was refused: push `auth_failed` and close with 4001.
    /// The core has already forgotten the connection.
    case authFailed(ConnectionRef, CoreError)

    // Feed.
    /// A live feed event (a post, a like or unlike, a comment, a deletion) for these connections
    /// — the author's and the author's friends' — sorted.
    case feedEvent(FeedEvent, to: [ConnectionRef])

    // Push.
    /// Something owed to a user with no live connection, for the push gateway (the webhook).
    /// Never logged: a replay makes none.
    case pushNotification(PushNotification)

    // Memories.
    /// A `memory_changed` event for every live connection of the memory's owner, sorted.
    case memoryChanged(MemoryChange, to: [ConnectionRef])
    /// The answer to a photo request (`CoreRequest.authorizePhotoUpload` and the like).
    case photoAccess(caller: ConnectionRef, PhotoAccess)

    // Profiles.
    /// A `profile` event: `user`'s whole profile now, for the live connections of the user's
    /// friends and the user's own, sorted.
    case profileChanged(user: Username, UserProfile, time: Int64, to: [ConnectionRef])

    // Passwords.
    /// `password_change`: verify `oldPassword` against `credentials` on a password worker and,
    /// if it matches, hash `newPassword`; then send `CoreRequest.finishPasswordChange`.
    case changePassword(
        ConnectionRef, requestID: String, username: Username, credentials: Credentials, oldPassword: String, newPassword: String,
        revokeOthers: Bool, address: String)
    /// A reset code was issued: hand the code the server drew for this request to the mail
    /// webhook, for `email`. Never logged, and no reply depends on it.
    case mailPasswordReset(ConnectionRef, requestID: String, username: Username, email: String, expiresAt: Int64)
    /// The reset code matched: hash `newPassword`, then send `CoreRequest.finishPasswordReset`.
    case hashResetPassword(ConnectionRef, requestID: String, username: Username, codeHash: [UInt8], newPassword: String, address: String)
    // Reports.
    /// A new report, for the report webhook. Made by the node that decided it only (a replay
    /// makes none); the report itself is durable, so a hand-off lost in a restart is still in
    /// the operator's list.
    case reportFiled(ModerationReport)
    // Moderation and deletion.
    /// `account_delete`: check the password off the core thread (in the login lane), then send
    /// `CoreRequest.finishAccountDeletion` with the same connection, request ID and address.
    case verifyAccountDeletion(ConnectionRef, requestID: String, username: Username, credentials: Credentials, password: String, address: String)
    /// The photos with these hashes have no owner left (an account was deleted): remove their
    /// files, off the core thread. Never logged: a replay makes none (a file left by a crash
    /// before its removal is found by the start-up sweep of unowned photos).
    case removePhotoFiles([String])
}
