/// Everything a `HuddleClient` needs to know before it connects.
public struct HuddleClientConfiguration: Sendable {
    /// The server's protocol endpoint, e.g. `ws://127.0.0.1:8080/v1` or `wss://…/v1`.
    public var url: ClientURL
    /// Transport options: TLS trust (`tls.caFile`, `tls.insecure`, else the system store),
    /// compression, message and queue limits, the connect timeout. The client adds the
    /// `huddle.v1` subprotocol and its `Authorization` header itself.
    public var connection = ClientConnectionOptions()
    public var credentials: HuddleCredentials
    /// A label for sessions this client opens (`login` with password credentials).
    public var device: String?
    /// How long a request may wait for its reply, counted from the call: time spent waiting
    /// for a connection counts too.
    public var requestTimeoutMilliseconds: Int64 = 10_000
    public var reconnect = ReconnectPolicy()
    public var heartbeat = Heartbeat()
    /// Requests that may wait for a connection (made while reconnecting); more fail with
    /// `overloaded`, so memory stays bounded however long the server is away.
    public var maxQueuedRequests = 1_000

    public init(url: ClientURL, credentials: HuddleCredentials = .none) {
        self.url = url
        self.credentials = credentials
    }
}
