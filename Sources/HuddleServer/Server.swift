import Glibc
import HuddleCore
import HuddleCrypto
import HuddleIO
import HuddleRedis
import HuddleStore
import HuddleWebSocket
import Logging
import Synchronization

/// The Huddle server process: one event loop per thread, all accepting from one listening socket
/// per port, running until SIGINT or SIGTERM, then draining gracefully.
public final class Server {
    private let configuration: ServerConfiguration
    private let logger: Logger

    public init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs until SIGINT/SIGTERM, drains (README, "Shutdown sequence and its budget"), then
    /// ends the process with status 0. Throws only when the start fails.
    public func run() throws -> Never {
        // A peer that vanished must give EPIPE on write, not kill the process. OpenSSL writes
        // to sockets with write(2), so MSG_NOSIGNAL alone is not enough.
        signal(SIGPIPE, SIG_IGN)
        // A file-size limit (ulimit -f) must make a write fail with EFBIG — which the log turns
        // into refused writes — not kill the process.
        signal(SIGXFSZ, SIG_IGN)
        // Block the shutdown signals before any thread starts, so the loops inherit the mask
        // and only this thread receives them, in sigwait below.
        var shutdownSignals = sigset_t()
        sigemptyset(&shutdownSignals)
        sigaddset(&shutdownSignals, SIGINT)
        sigaddset(&shutdownSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &shutdownSignals, nil)

        let tlsContext = try makeTLSContext()
        let threadCount = configuration.threads > 0 ? configuration.threads : max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let loops = try (0..<threadCount).map { try EventLoop(index: $0) }
        let photoUploads = PhotoUploads(maxUploads: configuration.maxUploads, maxUploadsPerUser: configuration.maxUploadsPerUser)
        let metrics = ServerMetrics(
            loopCount: threadCount, photoUploads: photoUploads, exports: ExportGate(maxConcurrent: configuration.maxConcurrentExports),
            cluster: configuration.cluster.map { ClusterMetrics(maxHealthyLag: $0.maxHealthyLag) })
        let contexts = loops.map { LoopContext(loop: $0, configuration: configuration, tlsContext: tlsContext, metrics: metrics, logger: logger) }

        let persistence: Persistence?
        let core: HuddleCore
        let photoStore: PhotoStore
        var clusterWriterID: String?
        var clusterPosition: UInt64 = 0
        if let cluster = configuration.cluster {
            // The shared log is the durable state: the node starts from the newest snapshot in
            // the shared directory (empty without one) and reads the log after its position.
            let writerID = cluster.nodeName + "/" + Crypto.randomBytes(8).map { String($0, radix: 16) }.joined()
            try NodeLease.claim(cluster, holder: writerID)
            logger.notice("cluster node", metadata: ["node": "\(cluster.nodeName)", "redis": "\(cluster.redis)", "shared-dir": "\(cluster.sharedDirectory)"])
            clusterWriterID = writerID
            persistence = nil
            var coreConfiguration = configuration.core
            coreConfiguration.tellsLocalPresence = true  // presence is global: the others are told
            let snapshot = try ClusterSnapshots.loadNewest(sharedDirectory: cluster.sharedDirectory, logger: logger)
            if let snapshot { logger.notice("loaded the shared snapshot", metadata: ["position": "\(snapshot.position)"]) }
            clusterPosition = snapshot?.position ?? 0
            core = HuddleCore(configuration: coreConfiguration, restoring: snapshot?.state ?? CoreDurableState())
            photoStore = try PhotoStore(directory: cluster.sharedDirectory + "/photos", temporaryName: "tmp-" + NodeLease.fileName(cluster.nodeName))
        } else {
            (persistence, core) = try Persistence.open(configuration: configuration, logger: logger)
            // Opened after the log, which holds the data directory's lock: the store clears
            // unfinished uploads, which must not be another server's.
            photoStore = try PhotoStore(directory: configuration.dataDirectory + "/photos")
        }
        let photoWorkers = try WorkerThreads(name: "huddle-photo", count: 2)
        if configuration.cluster == nil {
            // A crash between an account's deletion and the removal of its photos left files
            // nobody owns (single-node only: a cluster node may not have applied the newest
            // uploads of the others yet).
            try PhotoSweep.removeUnowned(from: photoStore, keeping: core.durableState.photos, logger: logger)
        }
        let runner = try CoreRunner(
            configuration: configuration, core: core, persistence: persistence, ioLoops: loops, metrics: metrics, logger: logger,
            clusterWriterID: clusterWriterID, clusterPosition: clusterPosition)
        if let cluster = configuration.cluster {
            // Its own connection on the core's loop: a login's check is not queued behind appends.
            let client = RedisClient(endpoint: cluster.redis, loop: runner.loop)
            runner.sharedLoginThrottle = SharedLoginThrottle(RedisLoginThrottle(client: client, limits: .init(configuration.core)))
            // Its own connection too: a snapshot's recording and trimming wait behind no append.
            runner.clusterSnapshots = try ClusterSnapshots(
                sharedDirectory: cluster.sharedDirectory, redis: RedisClient(endpoint: cluster.redis, loop: runner.loop), nodeName: cluster.nodeName,
                intervalMilliseconds: Int64(configuration.snapshotIntervalMilliseconds), metrics: metrics.clusterSnapshots, logger: logger)
            // One lease per node: the registry renews `huddle:node:<name>` with the same value
            // as the node's own lease (the writer ID).
            runner.presenceRegistry = try RedisPresenceRegistry(
                endpoint: cluster.redis, loop: runner.loop, node: cluster.nodeName, nonce: clusterWriterID ?? cluster.nodeName
            ) { [unowned runner] changes in
                for change in changes {
                    let body: CoreRequestBody
                    switch change {
                    case .online(let user, let node): body = .presenceElsewhere(user: user, node: node, online: true)
                    case .offline(let user, let node): body = .presenceElsewhere(user: user, node: node, online: false)
                    case .nodeGone(let node): body = .nodeGone(node: node)
                    }
                    runner.process(CoreRequest(body), op: nil, submitted: 0)
                }
            }
        }
        let endpoints = contexts.map { context in
            ProtocolEndpoint(loopIndex: context.loop.index, runner: runner, configuration: configuration, metrics: metrics)
        }
        runner.attach(endpoints)
        let pushGateway = try configuration.push.webhook.map { try PushGateway(webhook: $0, settings: configuration.push, metrics: metrics.push, logger: logger) }
        runner.pushGateway = pushGateway
        let identitySignIns = try configuration.identity.isEnabled ? IdentitySignIns(
            verifier: IdentityVerifier(settings: configuration.identity, metrics: metrics.identity, download: JWKSDownload.get),
            threads: 2, sessionTTLMilliseconds: Int64(configuration.sessionTTLMilliseconds), logger: logger) : nil
        runner.identitySignIns = identitySignIns
        let resetMailer = try configuration.passwordResetWebhook.map {
            try PasswordResetMailer(
                webhook: $0, secret: configuration.passwordResetSecret, caFile: configuration.passwordResetCAFile, metrics: metrics.passwordResets,
                logger: logger)
        }
        runner.passwordResetMailer = resetMailer
        // Reports go out as pushes do (queue, retries, signature, CA), to a webhook of their own.
        let reportGateway = try configuration.reportWebhook.map {
            try PushGateway(webhook: $0, settings: configuration.push, metrics: metrics.push, logger: logger, purpose: "report")
        }
        runner.reportGateway = reportGateway
        runner.photoRemoval = (photoStore, photoWorkers)
        for (context, endpoint) in zip(contexts, endpoints) {
            context.addEndpoint(endpoint, path: "/v1")
            let photos = PhotoAPI(runner: runner, endpoint: endpoint, context: context, store: photoStore, workers: photoWorkers, uploads: photoUploads)
            context.photoAPI = photos
            context.exportAPI = ExportAPI(photos: photos, gate: metrics.exports, idleTimeoutMilliseconds: configuration.idleTimeoutMilliseconds)
            if let apiKey = configuration.apiKey {
                context.httpAPI = HTTPAPI(apiKey: apiKey, runner: runner, endpoint: endpoint, loopIndex: context.loop.index)
            }
        }

        if configuration.benchEndpoints {
            let hub = BroadcastHub(loops: loops, maxMessageSize: configuration.benchMaxMessageSize)
            for context in contexts {
                context.addEndpoint(EchoEndpoint(maxMessageSize: configuration.benchMaxMessageSize), path: "/echo")
                context.addEndpoint(hub.endpoint(forLoop: context.loop.index), path: "/broadcast")
            }
        }

        // Both ports are bound before either is announced: a start that fails on the second
        // never said it was listening.
        let spreader = ConnectionSpreader(contexts)
        let port = try listenEverywhere(contexts, port: configuration.port, tls: false, spreader: spreader)
        let tlsPort = try configuration.tlsPort.map { try listenEverywhere(contexts, port: $0, tls: true, spreader: spreader) }
        logger.notice("listening", metadata: ["url": "\(AbsoluteURL.origin(scheme: "ws", host: configuration.host, port: port))", "threads": "\(threadCount)"])
        if let tlsPort {
            logger.notice("listening", metadata: ["url": "\(AbsoluteURL.origin(scheme: "wss", host: configuration.host, port: tlsPort))"])
        }
        logger.notice("started", metadata: StartupSummary.metadata(configuration, threads: threadCount, tlsPort: tlsPort))
        if configuration.benchEndpoints {
            logger.notice("bench endpoints enabled: /echo, /broadcast", metadata: ["max-message-size": "\(configuration.benchMaxMessageSize)"])
        }

        try pushGateway?.start()
        try resetMailer?.start()
        try reportGateway?.start()
        try runner.start()
        let threads = try loops.map { loop in
            try LoopThread.spawn(name: "huddle-io-\(loop.index)") { loop.run() }
        }

        var received: Int32 = 0
        sigwait(&shutdownSignals, &received)
        logger.notice("shutting down", metadata: ["signal": "\(received == SIGINT ? "SIGINT" : "SIGTERM")"])
        // One budget from the signal to the exit (README, "Shutdown"): the drain, the pushes'
        // hand-off and the snapshot each end at this deadline; only the log's sync does not.
        let grace = Int64(configuration.exitBudgetMilliseconds)
        let deadline = MonotonicClock.milliseconds() + grace
        for context in contexts {
            let loop = context.loop
            LoopBound(context, loop: loop).execute { $0.shutDown(grace: grace) { loop.stop() } }
        }
        // The loops reach their contexts and endpoints through unowned references; keep every
        // one alive until the threads are gone (an optimised build would free them earlier).
        withExtendedLifetime((contexts, endpoints)) {
            for thread in threads { thread.join() }
        }
        runner.stop(deadline: deadline)
        pushGateway?.join()
        resetMailer?.stop()
        reportGateway?.join()
        photoWorkers.stop()
        identitySignIns?.stop()
        logger.notice("stopped")
        // Not a return: that would free the state object by object (a million publications,
        // hundreds of ms on a busy machine: past the exit budget) for a process about to end.
        // The kernel takes the memory back at once; every file is already synced and closed.
        exit(0)
    }

    private func makeTLSContext() throws -> TLSContext? {
        guard configuration.tlsPort != nil else { return nil }
        guard let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath else {
            throw ConfigurationError("--tls-port needs --tls-cert and --tls-key")
        }
        return try TLSContext(certificateChainPath: certificate, privateKeyPath: key)
    }

    /// Binds the port once and gives every loop its own descriptor of that one socket (dup).
    ///
    /// Not a socket per loop with SO_REUSEPORT: the kernel lets any process of the same user
    /// join such a group, so a second server on the port started silently and took a share of
    /// the new connections (issue 12, problem 11). A probe bind before joining would leave a
    /// window in which two servers starting together both pass. One socket without SO_REUSEPORT
    /// makes the kernel refuse the second bind (EADDRINUSE), which is reported naming the port.
    private func listenEverywhere(_ contexts: [LoopContext], port: Int, tls: Bool, spreader: ConnectionSpreader) throws -> Int {
        let fd: Int32
        do {
            fd = try Socket.listen(host: configuration.host, port: port)
        } catch let error as SystemError where error.errno == EADDRINUSE {
            throw ConfigurationError("\(tls ? "--tls-port" : "--port") \(port): \(configuration.host):\(port) is already in use (another huddle server?)")
        }
        defer { close(fd) }  // each loop holds a descriptor of its own
        for context in contexts {
            let own = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            guard own >= 0 else { throw SystemError("dup(listening socket)") }
            try context.listen(fd: own, tls: tls, spreader: spreader)
        }
        return Socket.localPort(fd)
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
