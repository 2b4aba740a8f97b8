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
}
