import Glibc
import HuddleIO
import HuddleWebSocket
import Logging

/// The server's state on one I/O loop: its connections, the ones with output to flush this
/// turn, its endpoints and its shared compressors. Touched only on that loop's thread: other
/// threads reach it through a `LoopBound`.
final class LoopContext {
    let loop: EventLoop
    let configuration: ServerConfiguration
    let logger: Logger
    let headLimits: HTTPHeadParser.Limits
    let deflateOptions: PerMessageDeflateServerOptions
    let tlsContext: TLSContext?
    let metrics: ServerMetrics
    let backpressure: BackpressureRule
    let metricsAccess: MetricsAccess
    /// The HTTP API on this loop, when an API key is configured.
    var httpAPI: HTTPAPI?
    /// The photo endpoints on this loop (always on: users authenticate with their session token).
    var photoAPI: PhotoAPI?
    /// The export archive's endpoint (same token rules as photos).
    var exportAPI: ExportAPI?
    /// The web app and the SDK (/app/, /sdk/huddle.js); nil with `--no-web-app`.
    let staticFiles: StaticFiles?
    private var endpoints: [String: any WebSocketEndpoint] = [:]
    private(set) var connections = SlottedList<Connection>(slot: \.slot)
    private let pendingFlushes = PendingFlushes<Connection>()
    /// One deflater per window size for every connection that agreed to
    /// server_no_context_takeover: compression state is per message, so it can be shared.
    private var sharedDeflaters: [Int: PerMessageDeflater] = [:]
    private var listeners: [Listener] = []
    /// Set by `shutDown`: a connection another loop accepted just before is closed, not served.
    private var shuttingDown = false
    /// Inflates for every connection whose client agreed to client_no_context_takeover: a
    /// message is inflated whole, so one zlib stream (15-bit window, which also reads smaller
    /// windows) serves the loop and idle connections hold no zlib memory.
    private(set) lazy var sharedInflater = PerMessageInflater(windowBits: 15, noContextTakeover: true)

    init(loop: EventLoop, configuration: ServerConfiguration, tlsContext: TLSContext?, metrics: ServerMetrics, logger: Logger) {
        self.loop = loop
        self.metrics = metrics
        metricsAccess = MetricsAccess(token: configuration.metricsToken)
        self.configuration = configuration
        backpressure = BackpressureRule(maxOutboundBytes: configuration.maxOutboundBytes)
        self.tlsContext = tlsContext
        staticFiles = configuration.webApp ? StaticFiles() : nil
        var logger = logger
        logger[metadataKey: "loop"] = "\(loop.index)"
        self.logger = logger
        var limits = HTTPHeadParser.Limits()
        limits.maxHeadSize = configuration.maxRequestHeadSize
        headLimits = limits
        var options = PerMessageDeflateServerOptions()
        options.enabled = configuration.permessageDeflate
        deflateOptions = options
        loop.onTurnEnd { [unowned self] in self.flushDirty() }
        loop.schedule(after: Self.sweepInterval, repeating: Self.sweepInterval) { [unowned self] in self.sweep() }
    }

    /// How often deadlines are checked: timeouts fire up to this late, in exchange for no
    /// timer per connection.
    static let sweepInterval: Int64 = 250

    func addEndpoint(_ endpoint: any WebSocketEndpoint, path: String) {
        endpoints[path] = endpoint
    }

    func endpoint(for path: String) -> (any WebSocketEndpoint)? { endpoints[path] }

    func listen(fd: Int32, tls: Bool, spreader: ConnectionSpreader) throws {
        let listener = Listener(fd: fd, tls: tls, context: self, spreader: spreader)
        try loop.register(fd, events: Listener.events, handler: listener)
        listeners.append(listener)
    }

    func sharedDeflater(windowBits: Int) -> PerMessageDeflater {
        if let deflater = sharedDeflaters[windowBits] { return deflater }
        let deflater = PerMessageDeflater(windowBits: windowBits, noContextTakeover: true)
        sharedDeflaters[windowBits] = deflater
        return deflater
    }

    // MARK: Connections

    func accepted(fd: Int32, peer: String, tls: Bool) {
        guard !shuttingDown else {
            _ = Glibc.close(fd)
            return
        }
        var stream: TLSStream?
        if tls, let tlsContext {
            do {
                stream = try TLSStream(context: tlsContext, fd: fd)
            } catch {
                logger.error("TLS setup failed", metadata: ["peer": "\(peer)", "error": "\(error)"])
                _ = Glibc.close(fd)
                return
            }
        }
        let connection = Connection(fd: fd, tls: stream, context: self)
        do {
            try loop.register(fd, events: EventLoop.readable, handler: connection)
        } catch {
            logger.error("cannot watch connection", metadata: ["peer": "\(peer)", "error": "\(error)"])
            _ = Glibc.close(fd)
            return
        }
        connections.append(connection)
        metrics.loop(loop.index).connectionsAccepted.add(1, ordering: .relaxed)
    }

    func remove(_ connection: Connection) {
        if connections.remove(connection) {
            metrics.loop(loop.index).connectionsClosed.add(1, ordering: .relaxed)
        }
    }

    func markDirty(_ connection: Connection) {
        pendingFlushes.mark(connection)
    }

    /// End of the loop turn: every connection that queued output writes it, once.
    private func flushDirty() {
        pendingFlushes.flushAll()
    }

    private func sweep() {
        let now = loop.now
        // checkDeadlines may remove the connection (swap-remove), so iterate over a copy.
        for connection in connections.elements {
            connection.transport.releaseSpareCapacity()
            connection.checkDeadlines(now: now)
        }
    }

    // MARK: Shutdown

    /// How often a drain looks for connections whose requests are all answered.
    private static let drainCheckInterval: Int64 = 5

    /// The graceful drain: stops accepting and stops reading every open WebSocket, closes each
    /// one (1001) right after the replies to every request it had read (the close frame follows
    /// them in the same queue), and stops the loop once every connection is gone or `grace`
    /// has passed. Bytes still unread were never seen, so a client may resend what they held
    /// (protocol.md, close code 1001). An HTTP request already read gets its response; one
    /// still arriving is cut.
    func shutDown(grace: Int64, then done: @escaping @Sendable () -> Void) {
        shuttingDown = true
        for listener in listeners { listener.close() }
        listeners = []
        var awaited = 0
        for connection in connections.elements {
            switch connection.phase {
            case .open:
                connection.stopReading()
                awaited += connection.requestsUnanswered
            case .closing, .draining:
                break
            case .httpBody where connection.awaitsResponse:
                awaited += 1
            default:
                connection.abort()
            }
        }
        let deadline = loop.now + grace
        var closed = 0
        var finished = false
        loop.schedule(after: 0, repeating: Self.drainCheckInterval) { [unowned self] in
            guard !finished else { return }
            for connection in connections.elements where connection.isOpen && connection.requestsUnanswered == 0 {
                connection.close(.goingAway, reason: "server shutting down")
                closed += 1
            }
            guard connections.isEmpty || loop.now >= deadline else { return }
            finished = true
            var unanswered = 0
            for connection in connections.elements {
                if connection.isOpen {
                    unanswered += connection.requestsUnanswered
                    connection.close(.goingAway, reason: "server shutting down")
                    connection.flush()
                }
                connection.abort()
            }
            if unanswered > 0 {
                logger.error("shutdown grace ran out before every request read was answered", metadata: [
                    "unanswered": "\(unanswered)", "grace-ms": "\(grace)",
                ])
            }
            logger.notice("drained", metadata: [
                "requests-in-flight": "\(awaited)", "closed-1001": "\(closed)", "unanswered": "\(unanswered)",
            ])
            done()
        }
    }
}
