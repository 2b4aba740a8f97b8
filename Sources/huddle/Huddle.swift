import ArgumentParser
import HuddleServer
import Logging
import Glibc
import HuddleStore

@main
struct Huddle: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "huddle",
        abstract: "A real-time WebSocket pub/sub server.",
        subcommands: [Serve.self, DataCommand.self],
        defaultSubcommand: Serve.self
    )
}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the server (the default command)."
    )

    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Port for ws:// (and /healthz).") var port: Int = 8080
    @Option(help: "I/O threads; 0 = one per core.") var threads: Int = 0
    @Option(help: "Port for wss:// (needs --tls-cert and --tls-key).") var tlsPort: Int?
    @Option(help: "PEM certificate chain for wss://.") var tlsCert: String?
    @Option(help: "PEM private key for wss://.") var tlsKey: String?
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
    @Option(help: "Bytes queued to a slow reader before it is closed.")
    var maxOutboundBytes: Int = 4 * 1024 * 1024
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
    @Option(help: "Requests per second per connection (bursts of twice as many).") var rateLimit: Double = 50
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"
    // Feed.
    // Push.
    // Activities.
    // Places.
    // Memories.
    @Option(help: "Largest photo in bytes PUT /api/v1/photos stores (413 beyond).")
    var maxPhotoSize: Int = 10 * 1024 * 1024

    func validate() throws {
        if tlsPort != nil && (tlsCert == nil || tlsKey == nil) {
            throw ValidationError("--tls-port needs --tls-cert and --tls-key")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0–65535") }
        guard threads >= 0 else { throw ValidationError("--threads must be 0 or more") }
        guard maxMessageSize > 0 else { throw ValidationError("--max-message-size must be positive") }
        guard Self.syncPolicy(fsync) != nil else { throw ValidationError("--fsync must be always, everysec or no") }
        guard snapshotInterval > 0 else { throw ValidationError("--snapshot-interval must be positive") }
        guard rateLimit > 0 else { throw ValidationError("--rate-limit must be positive") }
        guard kdfIterations >= 1000 else { throw ValidationError("--kdf-iterations must be at least 1000") }
        guard sessionTTL > 0, presenceGrace >= 0 else { throw ValidationError("--session-ttl must be positive and --presence-grace not negative") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        // Feed.
        // Push.
        // Activities.
        // Places.
        // Memories.
        guard maxPhotoSize > 0 else { throw ValidationError("--max-photo-size must be positive") }
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
        config.benchMaxMessageSize = maxMessageSize
        config.permessageDeflate = compression
        config.pingIntervalMilliseconds = pingInterval * 1000
        config.idleTimeoutMilliseconds = idleTimeout * 1000
        config.handshakeTimeoutMilliseconds = handshakeTimeout * 1000
        config.maxOutboundBytes = maxOutboundBytes
        config.apiKey = apiKey ?? ProcessEnvironment.value("HUDDLE_API_KEY")
        config.kdfIterations = kdfIterations
        config.requestsPerSecond = rateLimit
        config.requestBurst = rateLimit * 2
        config.dataDirectory = dataDir
        config.syncPolicy = Self.syncPolicy(fsync) ?? .always
        config.snapshotIntervalMilliseconds = snapshotInterval * 1000
        config.sessionTTLMilliseconds = sessionTTL * 1000
        config.core.presenceGraceMilliseconds = Int64(presenceGrace) * 1000
        // Feed.
        // Push.
        // Activities.
        // Places.
        // Memories.
        config.maxPhotoSize = maxPhotoSize
        return config
    }

    static func syncPolicy(_ name: String) -> SyncPolicy? {
        switch name {
        case "always": return .always
        case "everysec": return .everySecond
        case "no": return .never
        default: return nil
        }
    }

    func run() throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
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
