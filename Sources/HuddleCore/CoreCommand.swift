/// A durable state change: what the write-ahead log records and a replay re-applies.
///
/// `HuddleCore.apply(_:)` is a pure function of (state, command): everything it needs — time,
/// hashes, the session's expiry — travels inside the command. The case and label names are the
/// log's field names (synthesized Codable), so they must never be renamed.
public enum CoreCommand: Codable, Sendable, Equatable {
    case signUp(username: Username, email: String, credentials: Credentials, session: NewSession, time: Int64)
    case openSession(username: Username, session: NewSession, time: Int64)
    /// The exact sessions revoked by a logout; hashes of other users' sessions are ignored.
    case revokeSessions(username: Username, tokenHashes: [[UInt8]], time: Int64)
    /// Sessions expired long enough ago (`CoreConfiguration.expiredSessionRetentionMilliseconds`)
    /// to be forgotten; emitted by `tick`.
    case purgeExpiredSessions(tokenHashes: [[UInt8]], time: Int64)
    /// `data` is serialized JSON, opaque to the core; `from` is nil for the server.
    case publish(channel: String, from: Username?, type: String, data: String, time: Int64)
}
