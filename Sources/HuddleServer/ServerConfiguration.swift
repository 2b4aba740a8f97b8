/// Everything the server needs to know at start-up. Defaults are the embedded, single-machine
/// setup the README's run command uses; every limit here is documented in README.md.
import HuddleCore
import HuddleStore

public struct ServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    /// Number of I/O loops (threads). Each owns its connections; 0 means one per core.
    public var threads: Int = 0

    /// wss:// listener, served next to plain ws:// when a certificate and key are given.
    public var tlsPort: Int?
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?

    /// Serves the web app at `/app/` and the JavaScript SDK at `/sdk/huddle.js` (`--no-web-app` turns both off).
    public var webApp: Bool = true
    /// Enables the raw `/echo` and `/broadcast` endpoints used for conformance and benchmarks.
    public var benchEndpoints: Bool = false
    /// Largest message (after reassembly and decompression) the bench endpoints accept.
    /// Autobahn's limits cases send up to 16 MiB.
    public var benchMaxMessageSize: Int = 16 * 1024 * 1024
    /// Largest message the protocol endpoint (/v1) accepts (protocol.md, "Limits").
    public var maxMessageSize: Int = 64 * 1024

    /// Request rate per connection: `requestsPerSecond`, bursts of `requestBurst`.
    public var requestsPerSecond: Double = 50
    public var requestBurst: Double = 100

    /// Fair shares per user, across all of the user's connections (per client address before
    /// sign-in): requests, `data` bytes published, and bytes of pages read back (`UsageBudgets`).
    public var userRequestsPerSecond: Double = 200
    public var userRequestBurst: Double = 400
    public var userPublishedBytesPerSecond: Double = 1024 * 1024
    public var userPublishedBytesBurst: Double = 4 * 1024 * 1024
    public var userReadBytesPerSecond: Double = 4 * 1024 * 1024
    public var userReadBytesBurst: Double = 16 * 1024 * 1024

    /// PBKDF2-HMAC-SHA256 iterations for new passwords (OWASP 2023: 600 000). Stored with each
    /// hash, so changing it affects only new passwords.
    public var kdfIterations: Int = 600_000
    public var sessionTTLMilliseconds: Int = 30 * 24 * 3600 * 1000
    /// The HTTP API's key; nil disables the API.
    public var apiKey: String?
    /// Where the log and snapshots live (created if missing).
    public var dataDirectory: String = "huddle-data"
    /// When the log is fsynced: `always` (before every reply that says ok; group commit per
    /// core turn), `everySecond`, or `never` (the kernel decides) — as Redis's appendfsync.
    public var syncPolicy: SyncPolicy = .always
    /// A snapshot is taken this often, or sooner once the log grew by `snapshotLogBytes`.
    public var snapshotIntervalMilliseconds: Int = 300_000
    public var snapshotLogBytes: Int = 64 * 1024 * 1024

    /// The core's own settings (presence grace, history limits, login throttling).
    public var core = CoreConfiguration()
    /// Between two chunks of a deleted user's channels (`--erasure-chunk-interval`); 0: at once.
    public var erasureChunkIntervalMilliseconds: Int64 = 0

    /// Whether to negotiate RFC 7692 permessage-deflate when a client offers it.
    public var permessageDeflate: Bool = true

    /// HTTP request head limits and the time a client has to finish the upgrade (and TLS handshake).
    public var maxRequestHeadSize: Int = 8 * 1024
    public var handshakeTimeoutMilliseconds: Int = 10_000

    /// Liveness: ping a peer silent for this long, close it when silent for `idleTimeout`.
    public var pingIntervalMilliseconds: Int = 30_000
    public var idleTimeoutMilliseconds: Int = 75_000

    /// Per-connection outbound queue ceiling, the memory bound: a queue over it is closed (1008)
    /// at once. Readers are judged slow by `slowReaderTimeout` (protocol.md, "Backpressure").
    public var maxOutboundBytes: Int = 32 * 1024 * 1024
    /// Bytes queued to a connection must be written within this time, or it is closed (1008).
    public var slowReaderTimeoutMilliseconds: Int = 10_000

    /// From SIGTERM/SIGINT to the exit (README, "Shutdown"): the drain, the pushes' hand-off
    /// and the shutdown snapshot all end by then (the snapshot is given up; the log has it all).
    public var exitBudgetMilliseconds: Int = 2_000

    // Push.
    /// The push gateway: the webhook (nil: none) and its queue, retries and timeouts.
    public var push = PushSettings()
    /// Where each new report is POSTed (nil: none), with the push gateway's queue, retries,
    /// signing key and CA.
    public var reportWebhook: WebhookURL?

    // Password reset.
    /// Where reset codes are POSTed for the operator's mail sender (nil: no password reset),
    /// the key that signs them, and the CA an https:// webhook must chain to.
    public var passwordResetWebhook: WebhookURL?
    public var passwordResetSecret: String?
    public var passwordResetCAFile: String?
    /// How long a reset code is valid.
    public var passwordResetCodeTTLMilliseconds: Int64 = 15 * 60_000

    // Memories.
    /// Largest photo the photo endpoint stores (`PUT /api/v1/photos`); 413 beyond.
    public var maxPhotoSize: Int = 10 * 1024 * 1024
    /// Photo uploads in flight at once, per user and over the whole server: 429 beyond. Each
    /// holds a temporary file, a connection and, at its end, a worker.
    public var maxUploadsPerUser = 4
    public var maxUploads = 64
    /// An upload's whole body must arrive within this, or within its size at
    /// `photoUploadMinimumBytesPerSecond` if that is longer (408 beyond). It does not move with
    /// each byte: a client trickling a byte at a time cannot hold the upload open.
    public var photoUploadTimeoutMilliseconds = 60_000
    public static let photoUploadMinimumBytesPerSecond = 64 * 1024
    // Export.
    /// Export archives (`GET /api/v1/export`) being made or sent at once on the server; 429
    /// `too_many_exports` beyond. The per-user interval is `core.exportIntervalMilliseconds`.
    public var maxConcurrentExports = 2

    /// Bearer token `/metrics` requires; nil = open (`--metrics-token`).
    public var metricsToken: String?

    /// Cluster mode (`--redis`): the shared log in Redis instead of the local one; nil = a
    /// single node.
    public var cluster: ClusterSettings?

    /// Seconds between the info-level activity summary lines; 0 = none.
    public var summaryIntervalMilliseconds: Int = 60_000

    // Identities.
    /// Identity providers (OpenID Connect) and app-backend tokens; none by default.
    public var identity = IdentitySettings()

    public init() {}
}
