/// Everything the core must not lose: accounts, sessions and channels. The log's commands
/// rebuild it; a snapshot is this value encoded.
///
/// It is a value of copy-on-write collections, so taking it (`HuddleCore.durableState`) is
/// O(1) and a snapshot can be encoded on another thread while the core goes on. Encoding
/// sorts every collection, so equal states encode to equal bytes.
/// Ephemeral state — connections, subscriptions, presence, login throttling, logins being
/// verified — is not here: it dies with the process.
public struct CoreDurableState: Sendable, Equatable, Codable {
    public internal(set) var accounts = Accounts()
    public internal(set) var sessions = Sessions()
    public internal(set) var channels = Channels()

    public init() {}
}
