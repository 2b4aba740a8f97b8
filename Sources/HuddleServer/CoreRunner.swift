import Glibc
import HuddleCore
import HuddleIO
import HuddleProtocol
import HuddleRedis
import HuddleStore
import HuddleWebSocket
import Logging
import Synchronization

/// The core's thread: the single writer that gives every state change a total order.
///
/// It is an event loop without sockets: I/O loops hand it requests as tasks, it applies them
/// to `HuddleCore` one by one, and at the end of each turn sends every output of the turn to
/// the I/O loops — one batch per loop, events encoded (and compressed) once for all their
/// recipients. No Swift concurrency hop per message: a task queue and an eventfd.
// Sendable: I/O loops only call its queueing entry points (`loop.execute`); the rest is the core thread's.
final class CoreRunner: @unchecked Sendable {
    let loop: EventLoop
    private var thread: LoopThread?
    let core: HuddleCore
    /// The local write-ahead log; nil in cluster mode, whose log is `cluster`'s.
    let persistence: Persistence?
    /// Cluster mode (`--redis`): the shared log, and the turn held while its append is in flight.
    let cluster: ClusterLog?
    var clusterTurn = ClusterTurnState()
    var tokenCatchUp = TokenCatchUp()
    let ioLoops: [EventLoop]
    /// One per I/O loop; set before the thread starts.
    var endpoints: [ProtocolEndpoint] = []
    let passwordHashes: PasswordHashQueue
    /// Where `pushNotification` outputs go; nil without `--push-webhook` (they are dropped: the
    /// inbox and unread counts already hold what they tell of). Set before the thread starts.
    var pushGateway: PushGateway?
    /// Where `mailPasswordReset` outputs go; nil without `--password-reset-webhook` (the core
    /// then refuses resets as `unavailable`). Set before the thread starts.
    var passwordResetMailer: PasswordResetMailer?
    /// Where `reportFiled` outputs go; nil without `--report-webhook`.
    var reportGateway: PushGateway?
    /// Cluster mode's login limit shared by the nodes; nil in single-node mode (nothing asked).
    /// Set before the thread starts.
    var sharedLoginThrottle: SharedLoginThrottle?
    /// Where `removePhotoFiles` outputs are carried out, off the core thread. Set before the
    /// thread starts.
    var photoRemoval: (store: PhotoStore, workers: WorkerThreads)?
    /// Cluster mode's global presence: this node's users online, told to the others, and
    /// theirs submitted here. Set before the thread starts.
    var presenceRegistry: RedisPresenceRegistry?
    /// Verifies ID tokens and app tokens off the core; nil when no issuer and no app key is
    /// configured. Set before the thread starts.
    var identitySignIns: IdentitySignIns?
    /// Cluster mode's snapshots in the shared directory, written between turns by the node that
    /// holds the snapshotter lease. Set before the thread starts.
    var clusterSnapshots: ClusterSnapshots?
    let metrics: ServerMetrics
    let configuration: ServerConfiguration
    let logger: Logger
    /// Connections (on any loop) that take the shared compressed form of an event; while zero,
    /// events are not compressed at all.
    let deflateConnections = Atomic<Int>(0)

    // Core-thread state.
    var outbox: [[LoopDelivery]]
    /// This turn's push notifications, handed to the gateway with the outbox.
    var pushes: [PushNotification] = []
    /// Under `--fsync always`: sent outputs that wait for the log's background sync.
    var durabilityHold = DurabilityHold()
    /// This turn's answered requests, whose latency is observed when their outputs leave.
    var answered: [(op: String, submitted: UInt64)] = []
    /// Secrets that must reach a reply but never the core or the log: the plaintext token of a
    /// new session, the device label of a login in progress.
    var secrets: [ConnectionRef: [String: PendingSecrets]] = [:]
    var apiRequests: [String: ConnectionRef] = [:]
    private var nextAPIRequest: UInt64 = 0
    lazy var deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: true)
    /// This turn's handled requests, routed only after their commands are in the log.
    var turn: [HandledRequest] = []
    /// Set while the disk (or the shared log) refuses writes: write requests are answered
    /// `unavailable`, reads go on.
    var writesRefused: String?
    /// Debug builds: every request gets exactly one reply (`ReplyAudit`).
    var replyAudit = ReplyAudit()
    private var lastProbe: Int64 = 0
    private var snapshotRequested = false
    /// A deletion (an account erased, content removed) was logged: the next tick snapshots and
    /// drops every older snapshot and log segment, so nothing on disk holds what was deleted
    /// (protocol.md, "Deletion and retention"), instead of waiting for the snapshot interval.
    private var erasureSnapshotOwed = false
    /// A chunk of a pending erasure was asked for this turn: the next one is asked for after it
    /// (`continueErasure`), else at the next tick.
    var erasureChunkAsked = false
    var erasureChunkQueued = false
    private var snapshotForgetsTheFallback = false
    var budgets: UsageBudgets
    /// Where a turn's commands are logged: the persistence, or in the rollback test a log that
    /// refuses them.
    lazy var appendToLog: ([CoreCommand]) throws -> Void = { [persistence] in try persistence?.append($0) }

    struct HandledRequest {
        var request: CoreRequest
        var step: CoreStep
        var op: String?
        var submitted: UInt64
        /// A refusal made here instead of by the core, sent in its turn's order.
        var refusal: (ConnectionRef, [UInt8])? = nil
        /// A read's outputs, routed as soon as it was handled (`routeRead`), per loop.
        var routed: [[LoopDelivery]]? = nil
    }

    struct PendingSecrets {
        var token: String?
        var device: String?
        /// A login's spelling, kept only in cluster mode: the shared login limit keys an
        /// unknown login by it, as the core's throttle does.
        var login: String?
        /// A password reset code the server drew: for the mail, never the core or the log.
        var resetCode: String?

        mutating func merge(token: String?, device: String?, resetCode: String?) {
            if let token { self.token = token }
            if let device { self.device = device }
            if let resetCode { self.resetCode = resetCode }
        }
    }

    init(
        configuration: ServerConfiguration, core: HuddleCore, persistence: Persistence?, ioLoops: [EventLoop],
        metrics: ServerMetrics, logger: Logger, clusterWriterID: String? = nil, clusterPosition: UInt64 = 0
    ) throws {
        self.configuration = configuration
        self.core = core
        self.persistence = persistence
        self.ioLoops = ioLoops
        self.metrics = metrics
        self.logger = logger
        loop = try EventLoop(index: ioLoops.count, readBufferSize: 16)
        if let settings = configuration.cluster, let clusterWriterID, let clusterMetrics = metrics.cluster {
            cluster = ClusterLog(settings: settings, writerID: clusterWriterID, position: clusterPosition, loop: loop, metrics: clusterMetrics, logger: logger)
        } else {
            cluster = nil
        }
        passwordHashes = try PasswordHashQueue(threads: 2, metrics: metrics.passwordHashes)
        outbox = Array(repeating: [], count: ioLoops.count)
        budgets = UsageBudgets(configuration: configuration)
        loop.onTurnEnd { [unowned self] in self.endTurn() }
        persistence?.attach(coreLoop: loop) { [unowned self] outcome in self.synced(outcome) }
        loop.schedule(after: 250, repeating: 250) { [unowned self] in self.tick() }
        if configuration.summaryIntervalMilliseconds > 0 {
            let interval = Int64(configuration.summaryIntervalMilliseconds)
            var summary = ActivitySummary(metrics: metrics)
            loop.schedule(after: interval, repeating: interval) { [unowned self] in
                let position = self.persistence?.logPosition ?? self.cluster?.position ?? 0
                summary.log(usersOnline: self.core.usersOnline, logPosition: position, to: self.logger)
            }
        }
    }

    func attach(_ endpoints: [ProtocolEndpoint]) { self.endpoints = endpoints }

    func start() throws {
        if cluster != nil { loop.execute { [self] in startCluster() } }
        thread = try LoopThread.spawn(name: "huddle-core") { [loop] in loop.run() }
    }

    /// After the I/O loops have stopped: the last turn's pushes handed to the gateway, which
    /// drains them until `deadline` meanwhile, the log synced, a snapshot if it fits before
    /// `deadline` (monotonic ms), then the thread ends.
    func stop(deadline: Int64) {
        loop.execute { [self] in
            endTurn()
            syncBeforeStopping()
            pushGateway?.beginStopping(deadline: deadline)
            reportGateway?.beginStopping(deadline: deadline)
            persistence?.shutDown(of: core.durableState, deadline: deadline)
            cluster?.close()
            clusterSnapshots?.close()
            presenceRegistry?.close()
            loop.stop()
        }
        thread?.join()
        passwordHashes.stop()
        persistence?.close()
    }

    // MARK: Submitting (any thread)

    /// Queues a request; `token` and `device` ride along to the reply without entering the core.
    func submit(_ request: CoreRequest, op: String?, token: String? = nil, device: String? = nil, resetCode: String? = nil) {
        let submitted = MonotonicClock.nanoseconds()
        loop.execute { [self] in
            if token != nil || device != nil || resetCode != nil, let ref = request.connection, let requestID = request.requestID {
                secrets[ref, default: [:]][requestID, default: PendingSecrets()].merge(token: token, device: device, resetCode: resetCode)
            }
            process(request, op: op, submitted: submitted)
        }
    }

    /// A request an I/O loop decoded, waiting in that loop for its turn's hand-over.
    struct Submission: Sendable {
        var request: CoreRequest
        var op: String
        var submitted: UInt64
    }

    /// Queues the requests one loop turn decoded, in their order: one task (and at most one
    /// wake-up) for the turn instead of one per request.
    func submit(_ batch: [Submission]) {
        loop.execute { [self] in
            for submission in batch { process(submission.request, op: submission.op, submitted: submission.submitted) }
        }
    }

    /// A connection fell behind or caught up (protocol.md, "Backpressure"); in the connection's
    /// order with its requests, so its `connectionClosed` comes after.
    func readerBehindChanged(_ ref: ConnectionRef, behind: Bool) {
        loop.execute { [self] in core.readerBehindChanged(ref, behind: behind) }
    }

    /// Queues an HTTP API request, answered to `connection` on `loopIndex`.
    func submitAPI(op: String, from connection: ConnectionRef, _ body: CoreRequestBody) {
        let submitted = MonotonicClock.nanoseconds()
        loop.execute { [self] in
            nextAPIRequest += 1
            let requestID = "api-\(nextAPIRequest)"
            apiRequests[requestID] = connection
            process(CoreRequest(requestID: requestID, body), op: op, submitted: submitted)
        }
    }

    // MARK: Core thread

    func process(_ request: CoreRequest, op: String?, submitted: UInt64) {
        if cluster != nil {
            if waitsForTokenCatchUp(request, op: op, submitted: submitted) { return }
            if !admitToClusterTurn(request, op: op, submitted: submitted) { return }
            tokenSignInDecided(request)
        }
        replyAudit.expect(request)
        if sharedLoginThrottle != nil, case .beginLogin(let login, _, _) = request.body, let ref = request.connection, let requestID = request.requestID {
            secrets[ref, default: [:]][requestID, default: PendingSecrets()].login = login
        }
        if writesRefused != nil, request.effect == .write {
            refuseWrite(request)
            return
        }
        if let (connection, requestID) = request.sender, let owner = core.budgetOwner(of: connection, for: request),
           let refusal = budgets.admit(request, of: owner, now: MonotonicClock.milliseconds()) {
            refuse(request, from: connection, requestID, refusal)
            return
        }
        if case .continueErasure = request.body { erasureChunkAsked = true }
        let erasureBegan = request.body.mayErase ? MonotonicClock.nanoseconds() : 0
        let step = core.handle(request, at: WallClock.milliseconds())
        if erasureBegan != 0 { observeErasure(step.commands, since: erasureBegan) }
        var handled = HandledRequest(request: request, step: step, op: op, submitted: submitted)
        if request.effect == .pagedRead, step.commands.isEmpty { handled.routed = routeRead(handled) }
        turn.append(handled)
    }

    /// Encodes a read's reply at once and charges its size to the reader's budget, so the next
    /// read of this turn (from any of the user's connections) already finds the budget spent;
    /// the encoded outputs wait in the turn for their place in the reply order. A read changes
    /// nothing, so there is nothing for the log to confirm first.
    func routeRead(_ handled: HandledRequest) -> [[LoopDelivery]] {
        let pending = outbox
        outbox = Array(repeating: [], count: ioLoops.count)
        var replyBytes = 0
        for output in handled.step.outputs { replyBytes += route(output) }
        chargeRead(of: handled.request, replyBytes)
        let routed = outbox
        outbox = pending
        return routed
    }

    private func tick() {
        // Cluster mode: one node (the ticker) decides the durable part; the others run the rest.
        let decides = cluster?.isTicker ?? true
        process(decides ? .tick : CoreRequest(.localTick), op: nil, submitted: 0)
        budgets.purge(now: MonotonicClock.milliseconds())
        metrics.budgetOwners.store(budgets.trackedOwnerCount, ordering: .relaxed)
        if decides { process(.expireActivities, op: nil, submitted: 0) }
        // Every node: each logs the sessions it saw itself.
        process(.recordSessionsSeen, op: nil, submitted: 0)
        releaseCaughtUpSignIns()  // those out of time
        continueErasure(afterChunk: false)
        guard let persistence else { return }  // cluster mode: writes come back with the writer
        do {
            try persistence.tick()
        } catch {
            refuseWrites(because: "the log could not be synced: \(error)")
        }
        let now = MonotonicClock.milliseconds()
        if let reason = writesRefused, now - lastProbe >= 2_000 {
            lastProbe = now
            if persistence.diskAcceptsWrites(), !reason.hasPrefix("the log could not be synced") {
                writesRefused = nil
                logger.notice("the disk takes writes again; accepting writes")
            }
        }
        if writesRefused == nil, persistence.snapshotDue(now: now) {
            snapshotRequested = true
        }
        if writesRefused == nil, erasureSnapshotOwed, !persistence.snapshotInProgress {
            erasureSnapshotOwed = false
            snapshotRequested = true
            snapshotForgetsTheFallback = true
        }
    }

    /// End of the core's turn: log every command of the turn in one batch (group commit),
    /// and only then send the turn's replies and events. If the log refuses, the turn's writes
    /// are taken back (the durable state is rebuilt from disk) and answered `unavailable`.
    private func endTurn() {
        if cluster != nil {
            endClusterTurn()
            return
        }
        defer {
            // Only here, with every applied command in the log, is the state exactly what the
            // log's last sequence says: a snapshot taken mid-turn would hold changes the log
            // has not got yet, and a restart would replay them a second time.
            if snapshotRequested, writesRefused == nil {
                snapshotRequested = false
                persistence?.beginSnapshot(of: core.durableState, coreLoop: loop, forgettingTheFallback: snapshotForgetsTheFallback) {}
                snapshotForgetsTheFallback = false
                releaseDurable()  // starting the snapshot synced the log (but under `--fsync always`)
            }
        }
        routeTurn()
        sendOutbox()  // with an empty turn, the refusals answered without the core
        continueErasure(afterChunk: true)
    }

    /// Logs the turn's commands and routes its outputs into the outbox, or, if the log refuses
    /// them, takes the turn's writes back (`routeUnlogged`).
    func routeTurn() {
        guard !turn.isEmpty else { return }
        // Loops and closures, not key paths: a key path over `HandledRequest` copies the whole
        // request through its value witnesses (BENCHMARKS.md, "Acknowledged writes").
        var commands: [CoreCommand] = []
        for index in turn.indices where !turn[index].step.commands.isEmpty {
            commands.append(contentsOf: turn[index].step.commands)
        }
        var logged = true
        if !commands.isEmpty {
            do {
                try appendToLog(commands)
                if commands.contains(where: { $0.erasesContent }) {
                    if commands.contains(where: { $0.owesSnapshot }) { erasureSnapshotOwed = true }
                    countDeletions(in: commands)
                }
            } catch {
                logged = false
                refuseWrites(because: "\(error)")
                rollBack()
            }
        }
        finishTurn(logged: logged)
    }

    /// Routes the turn's outputs into the outbox — as they are when its commands are in the
    /// log, as `routeUnlogged` says when they never got there — and empties the turn.
    func finishTurn(logged: Bool) {
        // Taken out of the turn and read in place: a copy of each handled request would retain
        // (and then release) everything it holds (BENCHMARKS.md, "Acknowledged writes").
        var finished: [HandledRequest] = []
        swap(&finished, &turn)
        for position in finished.indices {
            if let (connection, text) = finished[position].refusal {
                sendReply(text, to: connection, finished[position].request.requestID)
            } else if let routed = finished[position].routed {
                for index in routed.indices { outbox[index] += routed[index] }
            } else if logged || finished[position].step.commands.isEmpty {
                for output in finished[position].step.outputs { route(output) }
            } else {
                routeUnlogged(finished[position])
            }
            // Inside the assert: release builds neither audit nor look the connection up.
            assert(
                replyAudit.checkAnswered(finished[position].request, finished[position].step, connectionKnown: isKnown(finished[position].request.connection)),
                "a request got no answer: \(finished[position].request)")
            if case .connectionClosed = finished[position].request.body, let ref = finished[position].request.connection {
                secrets[ref] = nil
                replyAudit.forget(ref)
            }
            if let op = finished[position].op, finished[position].step.outputs.contains(where: { $0.isDuplicateReply }) {
                metrics.countDuplicate(op: op)
            }
            if let op = finished[position].op, finished[position].submitted > 0 { answered.append((op, finished[position].submitted)) }
        }
        finished.removeAll(keepingCapacity: true)
        if turn.isEmpty { swap(&finished, &turn) }  // its buffer, for the next turn
    }

    func refuseWrites(because reason: String) {
        if writesRefused == nil {
            logger.critical("storage refuses writes; serving reads only until it recovers", metadata: ["reason": "\(reason)"])
        }
        writesRefused = reason
        lastProbe = MonotonicClock.milliseconds()
    }

    /// Puts the durable state back to what is on disk, keeping connections and subscriptions.
    private func rollBack() {
        do {
            guard let persistence else { preconditionFailure("cluster mode rolls back to a checkpoint") }
            core.restoreDurableState(try persistence.durableStateOnDisk(configuration: configuration.core))
        } catch {
            // Memory now holds changes the disk does not: the only safe state is a restart.
            logger.critical("cannot rebuild the state from disk after a failed write; exiting", metadata: ["error": "\(error)"])
            exit(70)
        }
    }

    /// Whether the core still knows the request's connection (HTTP and photo requests have none).
    private func isKnown(_ connection: ConnectionRef?) -> Bool {
        guard let connection else { return true }
        return core.budgetOwner(of: connection) != nil
    }

    /// The size of a page a user read is paid from their read-back budget once it is known.
    private func chargeRead(of request: CoreRequest, _ bytes: Int) {
        guard bytes > 0, let (connection, _) = request.sender,
              let owner = core.budgetOwner(of: connection)
        else { return }
        budgets.chargeRead(bytes, to: owner, now: MonotonicClock.milliseconds())
    }

    /// Sends the outbox and the pushes, or, while the log is not durable up to its last record
    /// (`--fsync always`, a background sync running), holds them behind the outputs already
    /// waiting, until `synced` releases them in order.
    func sendOutbox() {
        if let persistence {
            releaseDurable()
            let position = persistence.logPosition
            if !durabilityHold.isEmpty || persistence.acknowledgedSequence < position {
                if !pushes.isEmpty || !answered.isEmpty || outbox.contains(where: { !$0.isEmpty }) {
                    durabilityHold.hold(outbox, pushes, answered: answered, until: position)
                    outbox = Array(repeating: [], count: ioLoops.count)
                    pushes = []
                    answered = []
                }
                return
            }
        }
        for index in outbox.indices where !outbox[index].isEmpty {
            let batch = outbox[index]
            outbox[index] = []
            send(batch, toLoop: index)
        }
        if !pushes.isEmpty {
            for notification in pushes { pushGateway?.submit(notification) }
            pushes.removeAll()
        }
        if !answered.isEmpty {
            observeLatencies(of: answered)
            answered.removeAll(keepingCapacity: true)
        }
    }

    private func observeLatencies(of answered: [(op: String, submitted: UInt64)]) {
        let now = MonotonicClock.nanoseconds()
        for (op, submitted) in answered { metrics.observe(op: op, seconds: Double(now - submitted) / 1e9) }
    }

    private func send(_ batch: [LoopDelivery], toLoop index: Int) {
        let endpoint = endpoints[index]
        ioLoops[index].execute { endpoint.perform(batch) }
    }

    /// Sends, oldest first, the held outputs the log's durable sequence now covers.
    func releaseDurable() {
        guard let persistence, let released = durabilityHold.release(upTo: persistence.acknowledgedSequence, loops: ioLoops.count) else {
            return
        }
        for index in released.deliveries.indices where !released.deliveries[index].isEmpty {
            send(released.deliveries[index], toLoop: index)
        }
        for notification in released.pushes { pushGateway?.submit(notification) }
        observeLatencies(of: released.answered)
    }

    /// A background sync ended. Failed: the log refuses writes, and what the core applied after
    /// the last durable record may or may not be on the disk — nothing held may go out, and the
    /// memory that holds it may answer no one. The process exits, as PostgreSQL does after a
    /// failed fsync; the next start recovers from what the disk actually holds, and every
    /// client that was answered ok has its write there.
    private func synced(_ outcome: Result<UInt64, any Error>) {
        switch outcome {
        case .success:
            releaseDurable()
        case .failure(let error):
            logger.critical("the log could not be synced; exiting without answering what it may not hold", metadata: ["error": "\(error)"])
            exit(70)
        }
    }

    /// The shutdown: whatever is not yet durable is synced here, and its held outputs go out
    /// (the pushes to the gateway, which drains them).
    private func syncBeforeStopping() {
        guard let persistence else { return }
        do {
            try persistence.syncNow()
        } catch {
            logger.error("the log could not be synced at shutdown", metadata: ["error": "\(error)"])
            return
        }
        sendOutbox()
    }
}

