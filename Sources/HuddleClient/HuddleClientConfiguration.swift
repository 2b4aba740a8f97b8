/// Everything a `HuddleClient` needs to know before it connects.
public struct HuddleClientConfiguration: Sendable {
    /// The server's protocol endpoints, e.g. `ws://127.0.0.1:8080/v1` or `wss://…/v1`: the
    /// nodes of one cluster (any node serves any client), never empty. The client starts on
    /// the first and moves to the next, round robin, whenever an attempt fails or a connection
    /// drops, so a node that dies does not strand it (`HuddleClient.currentURL`).
    public var urls: [ClientURL] {
        didSet { precondition(!urls.isEmpty, "a Huddle client needs at least one server URL") }
    }
    /// The first of `urls`; setting it leaves that one URL.
    public var url: ClientURL {
        get { urls[0] }
        set { urls = [newValue] }
    }
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
        self.init(urls: [url], credentials: credentials)
    }

    /// A client of a cluster: `urls` (at least one) in the order to try them.
    public init(urls: [ClientURL], credentials: HuddleCredentials = .none) {
        precondition(!urls.isEmpty, "a Huddle client needs at least one server URL")
        self.urls = urls
        self.credentials = credentials
    }
}
