import HuddleWebSocket

/// How a `WebSocketClientConnection` connects and what it allows itself. The defaults suit one
/// interactive client and a load-test connection alike.
public struct ClientConnectionOptions: Sendable {
    /// Certificate trust for `wss://`; ignored for `ws://`.
    public var tls = ClientTLSOptions()
    /// The permessage-deflate offer (RFC 7692), or nil not to offer compression. The default
    /// offers `client_max_window_bits`, so the server may pick our window; whatever it answers
    /// (this server always answers both no_context_takeover parameters) is honoured.
    public var compression: PerMessageDeflateClientOffer? = PerMessageDeflateClientOffer()
    /// Offered in `Sec-WebSocket-Protocol`, in order of preference.
    public var subprotocols: [String] = []
    /// Extra request header fields, e.g. `("Authorization", "Bearer …")`.
    public var headers: [(String, String)] = []
    /// The largest message accepted from the server (after decompression); a bigger one fails
    /// the connection with 1009.
    public var maxMessageSize = 16 * 1024 * 1024
    /// Bytes that may wait in the outbound queue: `send` refuses a message (returns false) while
    /// the queue holds this much, so memory per connection stays under it plus one message.
    public var maxOutboundBytes = 4 * 1024 * 1024
    /// Time for everything up to the open connection: TCP connect, TLS, and the upgrade.
    public var connectTimeoutMilliseconds: Int64 = 10_000
    /// Time the server has to answer our close frame and close the TCP connection.
    public var closeTimeoutMilliseconds: Int64 = 3_000
    /// Local addresses to connect from, one per connection attempt in turn; nil lets the
    /// kernel choose (see `SourceAddresses`).
    public var sourceAddresses: SourceAddresses?

    public init() {}
}
