import HuddleProtocol

/// What a `HuddleClient` tells its application, in order, on its loop: the server's events
/// (protocol.md, "Events") and the client's own connection story.
public enum HuddleEvent: Sendable, Equatable {
    /// A publication on a subscribed channel, exactly once and in offset order: the client
    /// drops what it already delivered and fills gaps from the server's history on reconnect.
    case publication(ChannelPublication)
    /// A publication of a subscribed channel was removed (an operator's removal, or its
    /// author's account was deleted): it is a tombstone now, drop it from what you show. Its
    /// offset stays taken, so delivery order is unchanged.
    case publicationRemoved(channel: String, epoch: String, offset: UInt64, time: Int64)
    /// A friend came online or went offline.
    case presence(user: String, online: Bool, time: Int64)
    /// The other member of a chat room is typing.
    case typing(channel: String, user: String, time: Int64)
    /// A connection is open and signed in (`user` nil while anonymous). `resumed`: it follows
    /// an earlier connection of the same user that dropped. The subscriptions are being resumed
    /// (`recovered` events follow), but what is live only — `feed` events, `presence`, `typing` —
    /// was not replayed: read the feed again (`feed`) and the friends list (`friends`).
    case connected(user: HuddleUser?, resumed: Bool = false)
    /// The connection dropped (or an attempt failed); the next attempt starts after `delayMilliseconds`,
    /// on `HuddleClient.currentURL` (the next of several URLs).
    /// `attempt` counts the attempts since the last good connection (1 for the first retry).
    case reconnecting(attempt: Int, delayMilliseconds: Int64, reason: String)
    /// A subscription resumed after a reconnect (or after a gap the client noticed).
    /// `recovered: false` means publications were missed and could not be replayed (the
    /// server's history no longer reaches back, or the channel's history was lost): page
    /// `history` to catch up. Delivery continues from the channel's latest offset.
    case recovered(channel: String, recovered: Bool)
    /// The server refused to resume a subscription (e.g. `forbidden` after a friendship
    /// ended); the client no longer tracks the channel.
    case subscriptionEnded(channel: String, error: HuddleClientError)
    /// A change in the circle feed of the signed-in user (live only: see `FeedEvent`).
    case feed(FeedEvent)
    /// Where the owner of a subscribed `loc:USER` channel is, as the subscribe (or its resume
    /// after a reconnect) reported it: after the publications it replayed, before its result.
    /// Later changes are publications of type `place` on that channel: `Whereabouts(publication)`.
    case whereabouts(Whereabouts)
    /// One of the signed-in user's memories changed, on this device or another, at server time
    /// `time` (live only: see `MemoryChange`).
    case memory(MemoryChange, time: Int64)
    /// A friend (or the signed-in user, from another device) changed their profile, at server
    /// time `time`: the whole profile now (live only: on `connected` with `resumed`, read
    /// `friends` again).
    case profile(user: String, UserProfile, time: Int64)
    /// The client stopped for good and will not reconnect on its own.
    case stopped(HuddleStopReason)
    /// An event this client version does not know, as it came.
    case other(name: String, message: JSONValue)
}

/// Why a `HuddleClient` stopped.
public enum HuddleStopReason: Sendable, Equatable, CustomStringConvertible {
    /// `stop()` was called.
    case requested
    /// The server refused the client's credentials (`invalid_token`, `token_expired`,
    /// `invalid_credentials`…) or ended its session (close 4001: logout elsewhere, the HTTP
    /// API's disconnect). The token and the subscriptions (the refused user's) are forgotten:
    /// `start()` connects anonymously, ready for a new sign-in.
    case authenticationFailed(code: String, message: String)
    /// `ReconnectPolicy.maxAttempts` attempts failed in a row.
    case gaveUp(attempts: Int, lastReason: String)
    /// The server refused the upgrade for a reason retrying cannot fix (a wrong path).
    case refused(reason: String)

    public var description: String {
        switch self {
        case .requested: return "stopped"
        case .authenticationFailed(let code, let message): return "authentication failed: \(code): \(message)"
        case .gaveUp(let attempts, let reason): return "gave up after \(attempts) attempts: \(reason)"
        case .refused(let reason): return "refused: \(reason)"
        }
    }
}
