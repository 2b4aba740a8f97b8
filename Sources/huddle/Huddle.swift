import ArgumentParser
import Glibc
import HuddleBuildInfo
import HuddleRedis
import HuddleServer
import Logging

@main
struct Huddle: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "huddle",
        abstract: "A real-time WebSocket pub/sub server.",
        version: BuildInfo.versionLine,
        subcommands: [Serve.self, DataCommand.self],
        defaultSubcommand: Serve.self
    )

    /// `huddle --help` shows the flags of `serve` too: it is the default command, so its flags
    /// are the ones a newcomer types after `huddle`, and a help listing only subcommands hid them.
    /// For serve, the settings of the config file and the environment go first (ServeSettings).
    static func withSettings(_ arguments: [String]) -> [String] {
        let first = arguments.first ?? ""
        guard !["data", "help", "--version", "--help", "-h"].contains(first), !arguments.contains("--help"), !arguments.contains("-h") else {
            return arguments
        }
        let named = first == "serve"
        do {
            return (named ? ["serve"] : []) + (try ServeSettings.arguments(commandLine: Array(arguments.dropFirst(named ? 1 : 0))))
        } catch {
            exit(withError: error)
        }
    }

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--help"] || arguments == ["-h"] {
            print(helpMessage())
            print("")
            print(helpMessage(for: Serve.self))
            return
        }
        main(withSettings(arguments))
    }
}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the server (the default command)."
    )

    // Where settings come from (ServeSettings): a config file and HUDDLE_* variables under the flags.
    @Option(help: "A JSON config file: {\"flag-name\": value, …} for any flag below (or HUDDLE_CONFIG); flags > HUDDLE_* environment > file.")
    var config: String?
    @Flag(help: "Print the effective settings (flags, environment, config file, defaults) as a config file, secrets masked, and exit.")
    var printConfig = false

    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Port for ws:// (and /healthz).") var port: Int = 8080
    @Option(help: "I/O threads; 0 = one per core.") var threads: Int = 0
    @Option(help: "Port for wss:// (needs --tls-cert and --tls-key).") var tlsPort: Int?
    @Option(help: "PEM certificate chain for wss://.") var tlsCert: String?
    @Option(help: "PEM private key for wss://.") var tlsKey: String?
    @Flag(inversion: .prefixedNo, help: "Serve the web app at /app/ and the JavaScript SDK at /sdk/huddle.js.")
    var webApp = true
    @Flag(help: "Serve the raw /echo and /broadcast endpoints (conformance and benchmarks).")
    var bench = false
    @Option(help: "Largest message in bytes the /echo and /broadcast endpoints accept.")
    var maxMessageSize: Int = 16 * 1024 * 1024
    @Flag(inversion: .prefixedNo, help: "Negotiate permessage-deflate when offered.")
    var compression = true
    @Option(help: "Seconds of silence before the server pings a peer.") var pingInterval: Int = 30
    @Option(help: "Seconds of silence before the server closes a peer.") var idleTimeout: Int = 75
    @Option(help: "Seconds a client has to finish the TLS and HTTP upgrade handshakes.")
    var handshakeTimeout: Int = 10
    @Option(help: "Ceiling of a connection's write queue in bytes: over it, the connection is closed (1008).")
    var maxOutboundBytes: Int = 32 * 1024 * 1024
    @Option(help: "Seconds within which bytes queued to a connection must be written, or it is closed (1008).")
    var slowReaderTimeout: Int = 10
    @Option(help: "HTTP API key (or the HUDDLE_API_KEY environment variable); no key disables the API.")
    var apiKey: String?
    @Option(help: "PBKDF2 iterations for new password hashes.") var kdfIterations: Int = 600_000
    @Option(help: "Session lifetime in seconds.") var sessionTTL: Int = 30 * 24 * 3600
    @Option(help: "Seconds a user stays online after their last connection closes.") var presenceGrace: Int = 5
    @Option(help: "Directory for the write-ahead log and snapshots (created if missing).")
    var dataDir: String = "huddle-data"
    @Option(help: "When to fsync the log: always (before every ok reply), everysec, no.")
    var fsync: String = "always"
    @Option(help: "Seconds between snapshots (a snapshot also follows 64 MiB of log).")
    var snapshotInterval: Int = 300
    @Option(help: "Seconds from SIGTERM/SIGINT to the exit: the drain, push hand-off and shutdown snapshot end by then.")
    var exitBudget: Double = 2.0
    @Option(help: "Requests per second per connection (bursts of twice as many).") var rateLimit: Double = 50
    // Fair shares.
    @Option(help: "Requests per second per user across all their connections, or per address before sign-in (bursts of twice as many).")
    var userRateLimit: Double = 200
    @Option(help: "Bytes of publish data per second per user across all their connections (bursts of four times as many).")
    var userPublishBytes: Int = 1024 * 1024
    @Option(help: "Bytes of pages read back (history, feed, comments, memories) per second per user (bursts of four times as many).")
    var userReadBytes: Int = 4 * 1024 * 1024
    @Option(help: "Bytes one user may publish to rooms per day (bursts of a quarter of it).")
    var roomBytesPerUser: Int = 64 * 1024 * 1024
    @Option(help: "Most work one chunk of a deleted user's channels does in a core turn: a publication looked at or dropped is 1, a channel name 20.")
    var erasureChunkWork: Int = 20_000
    @Option(help: "Milliseconds between two chunks of a deleted user's channels (0: each follows the other at once, other requests in between).")
    var erasureChunkInterval: Int = 0
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"
    @Option(help: "Log line format: text (message, then key=value details), or json (one object per line, for log shippers).")
    var logFormat: String = "text"
    @Option(help: "Bearer token GET /metrics requires (Authorization: Bearer TOKEN); none = open to all.")
    var metricsToken: String?
    @Option(help: "Seconds between info-level activity summaries (connections, users online, messages/s, log position, refusals by kind); 0 = none.")
    var summaryInterval: Int = 60
    // Push.
    @Option(help: "Webhook (http:// or https://) that gets a JSON POST per notification to a user with no live connection.")
    var pushWebhook: String?
    @Option(help: "Key that signs webhook requests (X-Huddle-Signature: sha256=HMAC of the body); or HUDDLE_PUSH_WEBHOOK_SECRET.")
    var pushWebhookSecret: String?
    @Option(help: "PEM CA certificates an https webhook must chain to, instead of the system store.")
    var pushWebhookCa: String?
    @Option(help: "Notifications waiting for the webhook before the oldest is dropped.") var pushQueueSize: Int = 10_000
    @Option(help: "Attempts per notification (the first included) before it is dropped.") var pushMaxAttempts: Int = 6
    @Option(help: "Seconds one webhook attempt may take: connect, send, response status.") var pushTimeout: Int = 10
    // Password reset.
    @Option(help: "Webhook (http:// or https://) that gets a JSON POST {username, email, code, expires_at} per password reset code, for the operator's mail sender; none = no password reset.")
    var passwordResetWebhook: String?
    @Option(help: "Key that signs password reset webhook requests (X-Huddle-Signature: sha256=HMAC of the body); or HUDDLE_PASSWORD_RESET_WEBHOOK_SECRET.")
    var passwordResetWebhookSecret: String?
    @Option(help: "PEM CA certificates an https password reset webhook must chain to, instead of the system store.")
    var passwordResetWebhookCa: String?
    @Option(help: "Seconds a password reset code stays valid.") var passwordResetCodeTtl: Int = 900
    // Moderation.
    @Option(help: "Webhook (http:// or https://) that gets a JSON POST per new report, sent as pushes are (same signing key, CA, retries).")
    var reportWebhook: String?
    // Activities.
    @Option(help: "The activity list, comma-separated (1–64 names of 1–32 characters; \"Anything\" matches every other).")
    var activities: String = Self.defaultActivities
    // Memories.
    @Option(help: "Largest photo in bytes PUT /api/v1/photos stores (413 beyond).")
    var maxPhotoSize: Int = 10 * 1024 * 1024
    @Option(help: "Photo uploads one user may have in flight at once (429 beyond).") var maxUploadsPerUser: Int = 4
    @Option(help: "Photo uploads in flight at once over the whole server (429 beyond).") var maxUploads: Int = 64
    @Option(help: "Seconds an upload's body may take at least (longer for a large one: 64 KiB/s); 408 beyond.")
    var photoUploadTimeout: Int = 60
    @Option(help: "Bytes of photos one user may own (507 photo_quota_exceeded beyond).") var photoQuota: Int = 1 << 30
    // Export.
    @Option(help: "Export archives (GET /api/v1/export) made or sent at once over the whole server (429 too_many_exports beyond).")
    var maxConcurrentExports: Int = 2
    @Option(help: "Seconds a user waits between two export archives (429 exports_limited within).") var exportInterval: Int = 60
    // Cluster mode.
    @Option(help: "Cluster mode: redis://HOST[:PORT][/DB] or redis+sentinel://HOST[:PORT][,…]/MASTER[/DB]; the Redis stream huddle:log replaces the local log (needs --shared-dir).")
    var redis: String?
    @Option(help: "This node's name, unique in the cluster (default: host name:port).") var nodeName: String?
    @Option(help: "Cluster mode: the directory every node reads and writes photos in (a shared file system).")
    var sharedDir: String?
    @Option(help: "Cluster mode: replicas that must have a turn's log entry before its replies say ok (WAIT, 1 s; unavailable when short); 0 = off.")
    var redisWaitReplicas: Int = 0
    // Identities.
    @Option(help: "An OpenID Connect provider whose ID tokens sign in (identity_signin): 'issuer=ISS;audience=CLIENT_ID[,CLIENT_ID…];jwks=FILE-OR-URL'. Repeat for several.")
    var oidcIssuer: [String] = []
    @Option(help: "Seconds between reloads of an issuer's JWKS when a token names an unknown key id (a rotation); 0 = at every such token.")
    var oidcKeyRefreshInterval: Int = 30
    @Option(help: "The HS256 secret (32+ bytes) app-backend tokens are signed with (app_auth); or HUDDLE_APP_TOKEN_SECRET, or a file.")
    var appTokenSecret: String?
    @Option(help: "File holding the HS256 secret app-backend tokens are signed with (a final newline is dropped), instead of --app-token-secret.")
    var appTokenSecretFile: String?
    @Option(help: "PEM public key (RSA: RS256, P-256: ES256) app-backend tokens are signed with, instead of an HS256 secret.")
    var appTokenPublicKey: String?
    @Option(help: "The iss app-backend tokens must carry (default: not checked); their identities are filed under it (default: app).")
    var appTokenIssuer: String?
    @Option(help: "The aud app-backend tokens must carry (default: not checked).")
    var appTokenAudience: String?

    func validate() throws {
        if tlsPort != nil && (tlsCert == nil || tlsKey == nil) {
            throw ValidationError("--tls-port needs --tls-cert and --tls-key")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0–65535") }
        guard threads >= 0 else { throw ValidationError("--threads must be 0 or more") }
        guard maxMessageSize > 0 else { throw ValidationError("--max-message-size must be positive") }
        // The threshold at which a reader holds its publishers is half the ceiling: a ceiling
        // under two messages' worth would close readers before anyone waits for them.
        guard maxOutboundBytes >= 64 * 1024 else { throw ValidationError("--max-outbound-bytes must be at least 65536") }
        guard slowReaderTimeout > 0 else { throw ValidationError("--slow-reader-timeout must be positive") }
        guard ServerConfiguration.syncPolicy(named: fsync) != nil else { throw ValidationError("--fsync must be always, everysec or no") }
        guard snapshotInterval > 0 else { throw ValidationError("--snapshot-interval must be positive") }
        guard exitBudget > 0, exitBudget <= 60 else { throw ValidationError("--exit-budget must be over 0 and at most 60 seconds") }
        guard rateLimit > 0 else { throw ValidationError("--rate-limit must be positive") }
        // Fair shares. A burst must hold one publication of the largest data (16 KiB).
        guard userRateLimit > 0 else { throw ValidationError("--user-rate-limit must be positive") }
        guard erasureChunkWork >= 1, erasureChunkInterval >= 0 else {
            throw ValidationError("--erasure-chunk-work must be at least 1, --erasure-chunk-interval at least 0")
        }
        guard userPublishBytes >= 4096, userReadBytes >= 4096, roomBytesPerUser >= 65536 else {
            throw ValidationError("--user-publish-bytes and --user-read-bytes must be at least 4096, --room-bytes-per-user at least 65536")
        }
        guard kdfIterations >= 1000 else { throw ValidationError("--kdf-iterations must be at least 1000") }
        guard sessionTTL > 0 else { throw ValidationError("--session-ttl must be positive") }
        guard presenceGrace >= 0 else { throw ValidationError("--presence-grace must not be negative") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        guard LogLineHandler.Format(rawValue: logFormat) != nil else { throw ValidationError("--log-format must be text or json") }
        guard summaryInterval >= 0 else { throw ValidationError("--summary-interval must be 0 (off) or more") }
        // Push.
        // The report webhook is signed and trusted as pushes are: the push secret and CA may go with it alone.
        if pushWebhook != nil || reportWebhook == nil {
            try Self.checkWebhook(pushWebhook, secret: pushWebhookSecret, ca: pushWebhookCa, flag: "push-webhook")
        }
        try Self.checkWebhook(reportWebhook, secret: nil, ca: nil, flag: "report-webhook")
        guard pushQueueSize > 0, pushMaxAttempts > 0, pushTimeout > 0 else {
            throw ValidationError("--push-queue-size, --push-max-attempts and --push-timeout must be positive")
        }
        // Password reset.
        try Self.checkWebhook(passwordResetWebhook, secret: passwordResetWebhookSecret, ca: passwordResetWebhookCa, flag: "password-reset-webhook")
        guard passwordResetCodeTtl > 0 else { throw ValidationError("--password-reset-code-ttl must be positive") }
        // Activities.
        if let problem = Self.activitiesProblem(activities) { throw ValidationError("--activities: \(problem)") }
        // Memories.
        guard maxPhotoSize > 0 else { throw ValidationError("--max-photo-size must be positive") }
        guard maxUploadsPerUser > 0, maxUploads > 0, photoUploadTimeout > 0, photoQuota > 0 else {
            throw ValidationError("--max-uploads-per-user, --max-uploads, --photo-upload-timeout and --photo-quota must be positive")
        }
        // Export.
        guard maxConcurrentExports > 0, exportInterval >= 0 else {
            throw ValidationError("--max-concurrent-exports must be positive and --export-interval 0 or more")
        }
        // Identities.
        _ = try identitySettings()
        try validateCluster()
        // Last: the checks that look at files and resolve the host.
        try validateStartConditions()
    }

    var serverConfiguration: ServerConfiguration {
        var config = ServerConfiguration()
        config.host = host
        config.port = port
        config.threads = threads
        config.tlsPort = tlsPort
        config.tlsCertificatePath = tlsCert
        config.tlsKeyPath = tlsKey
        config.benchEndpoints = bench
        config.webApp = webApp
        config.benchMaxMessageSize = maxMessageSize
        config.permessageDeflate = compression
        config.pingIntervalMilliseconds = pingInterval * 1000
        config.idleTimeoutMilliseconds = idleTimeout * 1000
        config.handshakeTimeoutMilliseconds = handshakeTimeout * 1000
        config.maxOutboundBytes = maxOutboundBytes
        config.slowReaderTimeoutMilliseconds = slowReaderTimeout * 1000
        config.apiKey = apiKey ?? ProcessEnvironment.value("HUDDLE_API_KEY")
        config.kdfIterations = kdfIterations
        config.requestsPerSecond = rateLimit
        config.requestBurst = rateLimit * 2
        // Fair shares.
        config.userRequestsPerSecond = userRateLimit
        config.userRequestBurst = userRateLimit * 2
        config.userPublishedBytesPerSecond = Double(userPublishBytes)
        config.userPublishedBytesBurst = Double(userPublishBytes) * 4
        config.userReadBytesPerSecond = Double(userReadBytes)
        config.userReadBytesBurst = Double(userReadBytes) * 4
        config.core.roomBytesPerDay = roomBytesPerUser
        config.core.erasureChunkWork = erasureChunkWork
        config.erasureChunkIntervalMilliseconds = Int64(erasureChunkInterval)
        config.core.roomBytesBurst = roomBytesPerUser / 4
        config.dataDirectory = dataDir
        config.summaryIntervalMilliseconds = summaryInterval * 1000
        config.metricsToken = metricsToken
        config.syncPolicy = ServerConfiguration.syncPolicy(named: fsync) ?? .always
        config.snapshotIntervalMilliseconds = snapshotInterval * 1000
        config.exitBudgetMilliseconds = Int(exitBudget * 1000)
        config.sessionTTLMilliseconds = sessionTTL * 1000
        config.core.presenceGraceMilliseconds = Int64(presenceGrace) * 1000
        // Push.
        config.push.webhook = pushWebhook.flatMap { try? WebhookURL($0) }
        config.push.secret = pushWebhookSecret ?? ProcessEnvironment.value("HUDDLE_PUSH_WEBHOOK_SECRET")
        config.push.caFile = pushWebhookCa
        config.push.queueCapacity = pushQueueSize
        config.push.maxAttempts = pushMaxAttempts
        config.push.requestTimeoutMilliseconds = Int64(pushTimeout) * 1000
        // Password reset.
        config.passwordResetWebhook = passwordResetWebhook.flatMap { try? WebhookURL($0) }
        config.passwordResetSecret = passwordResetWebhookSecret ?? ProcessEnvironment.value("HUDDLE_PASSWORD_RESET_WEBHOOK_SECRET")
        config.passwordResetCAFile = passwordResetWebhookCa
        config.passwordResetCodeTTLMilliseconds = Int64(passwordResetCodeTtl) * 1000
        config.core.passwordResetEnabled = config.passwordResetWebhook != nil
        // Moderation.
        config.reportWebhook = reportWebhook.flatMap { try? WebhookURL($0) }
        // Activities.
        config.core.activities.names = Self.activityNames(activities)
        // Memories.
        config.maxPhotoSize = maxPhotoSize
        config.maxUploadsPerUser = maxUploadsPerUser
        config.maxUploads = maxUploads
        config.photoUploadTimeoutMilliseconds = photoUploadTimeout * 1000
        config.core.photoQuotaBytes = photoQuota
        // Export.
        config.maxConcurrentExports = maxConcurrentExports
        config.core.exportIntervalMilliseconds = Int64(exportInterval) * 1000
        // Identities.
        config.identity = (try? identitySettings()) ?? IdentitySettings()
        // Cluster mode.
        if let redis, let endpoint = try? RedisEndpoint(url: redis), let sharedDir {
            config.cluster = ClusterSettings(redis: endpoint, nodeName: nodeName ?? Self.defaultNodeName(port: port), sharedDirectory: sharedDir)
            config.cluster?.waitReplicas = redisWaitReplicas
        }
        return config
    }

    func run() throws {
        if printConfig {
            print(ServeSettings.describe(self))
            return
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let format = LogLineHandler.Format(rawValue: logFormat) ?? .text
        LoggingSystem.bootstrap { label in
            LogLineHandler(label: label, format: format, logLevel: level)
        }
        let logger = Logger(label: "huddle")
        do {
            try Server(configuration: serverConfiguration, logger: logger).run()
        } catch {
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
    }
}

enum ProcessEnvironment {
    static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        let value = String(cString: raw)
        return value.isEmpty ? nil : value
    }
}
