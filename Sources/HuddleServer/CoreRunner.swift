import Glibc
import HuddleCore
import HuddleCrypto
import HuddleIO
import HuddleProtocol
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
    private let core: HuddleCore
    private let persistence: Persistence
    private let ioLoops: [EventLoop]
    /// One per I/O loop; set before the thread starts.
    private var endpoints: [ProtocolEndpoint] = []
    private let passwordHashes: PasswordHashQueue
    /// Where `pushNotification` outputs go; nil without `--push-webhook` (they are dropped: the
    /// inbox and unread counts already hold what they tell of). Set before the thread starts.
    var pushGateway: PushGateway?
    private let metrics: ServerMetrics
    private let configuration: ServerConfiguration
    private let logger: Logger
    /// Connections (on any loop) that take the shared compressed form of an event; while zero,
    /// events are not compressed at all.
    let deflateConnections = Atomic<Int>(0)

    // Core-thread state.
    private var outbox: [[LoopDelivery]]
    /// Secrets that must reach a reply but never the core or the log: the plaintext token of a
    /// new session, the device label of a login in progress.
    private var secrets: [ConnectionRef: [String: PendingSecrets]] = [:]
    private var apiRequests: [String: ConnectionRef] = [:]
    private var nextAPIRequest: UInt64 = 0
    private lazy var deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: true)
    /// This turn's handled requests, routed only after their commands are in the log.
    private var turn: [HandledRequest] = []
    /// Set while the disk refuses writes: write requests are answered `unavailable`, reads go on.
    private var writesRefused: String?
    private var lastProbe: Int64 = 0
    private var snapshotRequested = false
    private var budgets: UsageBudgets

    private struct HandledRequest {
        var request: CoreRequest
        var step: CoreStep
        var op: String?
        var submitted: UInt64
        /// A refusal made here instead of by the core, sent in its turn's order.
        var refusal: (ConnectionRef, [UInt8])? = nil
        /// A read's outputs, routed as soon as it was handled (`routeRead`), per loop.
        var routed: [[LoopDelivery]]? = nil
    }

    private struct PendingSecrets {
        var token: String?
        var device: String?

        mutating func merge(token: String?, device: String?) {
            if let token { self.token = token }
            if let device { self.device = device }
        }
    }

    init(
        configuration: ServerConfiguration, core: HuddleCore, persistence: Persistence, ioLoops: [EventLoop],
        metrics: ServerMetrics, logger: Logger
    ) throws {
        self.configuration = configuration
        self.core = core
        self.persistence = persistence
        self.ioLoops = ioLoops
        self.metrics = metrics
        self.logger = logger
        loop = try EventLoop(index: ioLoops.count, readBufferSize: 16)
        passwordHashes = try PasswordHashQueue(threads: 2, metrics: metrics.passwordHashes)
        outbox = Array(repeating: [], count: ioLoops.count)
        budgets = UsageBudgets(configuration: configuration)
        loop.onTurnEnd { [unowned self] in self.endTurn() }
        loop.schedule(after: 250, repeating: 250) { [unowned self] in self.tick() }
        if configuration.summaryIntervalMilliseconds > 0 {
            let interval = Int64(configuration.summaryIntervalMilliseconds)
            var summary = ActivitySummary(metrics: metrics)
            loop.schedule(after: interval, repeating: interval) { [unowned self] in
                summary.log(usersOnline: self.core.usersOnline, logPosition: self.persistence.logPosition, to: self.logger)
            }
        }
    }

    func attach(_ endpoints: [ProtocolEndpoint]) { self.endpoints = endpoints }

    func start() throws {
        thread = try LoopThread.spawn(name: "huddle-core") { [loop] in loop.run() }
    }

    /// After the I/O loops have stopped: the last turn's pushes handed to the gateway, which
    /// drains them until `deadline` meanwhile, the log synced, a snapshot if it fits before
    /// `deadline` (monotonic ms), then the thread ends.
    func stop(deadline: Int64) {
        loop.execute { [self] in
            endTurn()
            pushGateway?.beginStopping(deadline: deadline)
            persistence.shutDown(of: core.durableState, deadline: deadline)
            loop.stop()
        }
        thread?.join()
        passwordHashes.stop()
        persistence.close()
    }

    // MARK: Submitting (any thread)

    /// Queues a request; `token` and `device` ride along to the reply without entering the core.
    func submit(_ request: CoreRequest, op: String?, token: String? = nil, device: String? = nil) {
        let submitted = MonotonicClock.nanoseconds()
        loop.execute { [self] in
            if token != nil || device != nil, let (ref, requestID) = request.connectionAndRequestID {
                secrets[ref, default: [:]][requestID, default: PendingSecrets()].merge(token: token, device: device)
            }
            process(request, op: op, submitted: submitted)
        }
    }

    /// A connection fell behind or caught up (protocol.md, "Backpressure"); in the connection's
    /// order with its requests, so its `connectionClosed` comes after.
    func readerBehindChanged(_ ref: ConnectionRef, behind: Bool) {
        loop.execute { [self] in core.readerBehindChanged(ref, behind: behind) }
    }

    /// Queues an HTTP API request, answered to `connection` on `loopIndex`.
    func submitAPI(op: String, from connection: ConnectionRef, _ makeRequest: @escaping @Sendable (String) -> CoreRequest) {
        let submitted = MonotonicClock.nanoseconds()
        loop.execute { [self] in
            nextAPIRequest += 1
            let requestID = "api-\(nextAPIRequest)"
            apiRequests[requestID] = connection
            process(makeRequest(requestID), op: op, submitted: submitted)
        }
    }

    // MARK: Core thread

    private func process(_ request: CoreRequest, op: String?, submitted: UInt64) {
        if writesRefused != nil, request.startsAWrite {
            refuse(request)
            return
        }
        if let (connection, requestID) = request.sender, let owner = core.budgetOwner(of: connection, for: request),
           let refusal = budgets.admit(request, of: owner, now: MonotonicClock.milliseconds()) {
            refuse(request, from: connection, requestID, refusal)
            return
        }
        let step = core.handle(request, at: WallClock.milliseconds())
        var handled = HandledRequest(request: request, step: step, op: op, submitted: submitted)
        if request.returnsPages, step.commands.isEmpty { handled.routed = routeRead(handled) }
        turn.append(handled)
    }

    /// Encodes a read's reply at once and charges its size to the reader's budget, so the next
    /// read of this turn (from any of the user's connections) already finds the budget spent;
    /// the encoded outputs wait in the turn for their place in the reply order. A read changes
    /// nothing, so there is nothing for the log to confirm first.
    private func routeRead(_ handled: HandledRequest) -> [[LoopDelivery]] {
        let pending = outbox
        outbox = Array(repeating: [], count: ioLoops.count)
        var replyBytes = 0
        for output in handled.step.outputs { replyBytes += route(output) }
        chargeRead(of: handled.request, replyBytes)
        let routed = outbox
        outbox = pending
        return routed
    }

    /// A request over its owner's fair share: answered `rate_limited` here, never reaching the
    /// core or the log.
    private func refuse(_ request: CoreRequest, from connection: ConnectionRef, _ requestID: String, _ refusal: UsageBudgets.Refusal) {
        metrics.countError("rate_limited")
        metrics.countBudgetRefusal(refusal.budget.rawValue)
        secrets[connection]?[requestID] = nil
        let text = ServerMessage.failure(
            id: requestID, code: "rate_limited", message: refusal.message, retryAfterMilliseconds: refusal.retryAfterMilliseconds)
        // Queued behind this turn's requests, whose replies are sent at its end: replies keep
        // the order of the requests.
        turn.append(HandledRequest(request: request, step: CoreStep(), op: nil, submitted: 0, refusal: (connection, text)))
    }

    private func tick() {
        process(.tick, op: nil, submitted: 0)
        budgets.purge(now: MonotonicClock.milliseconds())
        metrics.budgetOwners.store(budgets.trackedOwnerCount, ordering: .relaxed)
        process(.expireActivities, op: nil, submitted: 0)
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
    }

    /// End of the core's turn: log every command of the turn in one batch (group commit),
    /// and only then send the turn's replies and events. If the log refuses, the turn's writes
    /// are taken back (the durable state is rebuilt from disk) and answered `unavailable`.
    private func endTurn() {
        defer {
            // Only here, with every applied command in the log, is the state exactly what the
            // log's last sequence says: a snapshot taken mid-turn would hold changes the log
            // has not got yet, and a restart would replay them a second time.
            if snapshotRequested, writesRefused == nil {
                snapshotRequested = false
                persistence.beginSnapshot(of: core.durableState, coreLoop: loop) {}
            }
        }
        guard !turn.isEmpty else {
            sendOutbox()  // refusals answered without the core
            return
        }
        let commands = turn.flatMap(\.step.commands)
        var logged = true
        if !commands.isEmpty {
            do {
                try persistence.append(commands)
            } catch {
                logged = false
                refuseWrites(because: "\(error)")
                rollBack()
            }
        }
        let finished = MonotonicClock.nanoseconds()
        for handled in turn {
            if let (connection, text) = handled.refusal {
                outbox[connection.loop].append(.send(serial: connection.serial, text: text, kind: .reply))
            } else if let routed = handled.routed {
                for index in routed.indices { outbox[index] += routed[index] }
            } else if logged || handled.step.commands.isEmpty {
                for output in handled.step.outputs { route(output) }
            } else {
                routeUnlogged(handled)
            }
            if case .connectionClosed(let ref) = handled.request { secrets[ref] = nil }
            if let op = handled.op, handled.step.outputs.contains(where: \.isDuplicateReply) {
                metrics.countDuplicate(op: op)
            }
            if let op = handled.op, handled.submitted > 0 {
                metrics.observe(op: op, seconds: Double(finished - handled.submitted) / 1e9)
            }
        }
        turn.removeAll(keepingCapacity: true)
        sendOutbox()
    }

    private func refuseWrites(because reason: String) {
        if writesRefused == nil {
            logger.critical("storage refuses writes; serving reads only until it recovers", metadata: ["reason": "\(reason)"])
        }
        writesRefused = reason
        lastProbe = MonotonicClock.milliseconds()
    }

    /// Puts the durable state back to what is on disk, keeping connections and subscriptions.
    private func rollBack() {
        do {
            core.restoreDurableState(try persistence.durableStateOnDisk(configuration: configuration.core))
        } catch {
            // Memory now holds changes the disk does not: the only safe state is a restart.
            logger.critical("cannot rebuild the state from disk after a failed write; exiting", metadata: ["error": "\(error)"])
            exit(70)
        }
    }

    /// The outputs of a request whose commands never reached the log: its replies become
    /// `unavailable`, its events are dropped, closes still happen (the core already forgot
    /// those connections), and a connection that just signed up or logged in is closed (1013):
    /// its session does not exist after the rollback.
    private func routeUnlogged(_ handled: HandledRequest) {
        for output in handled.step.outputs {
            switch output {
            case .reply(let ref, let requestID, _):
                replyUnavailable(ref, requestID)
            case .deliver, .presenceChanged, .typing, .sessionAccepted, .verifyPassword, .hashNewPassword:
                break
            // Feed.
            case .feedEvent:
                break
            // Push.
            // The publication or notice it tells of was taken back: nothing to tell.
            case .pushNotification:
                break
            // Memories.
            case .memoryChanged:
                break
            case .photoAccess(let caller, _):
                outbox[caller.loop].append(.photoAccess(serial: caller.serial, .storageUnavailable))
            case .closeConnections, .authFailed:
                route(output)
            }
        }
        switch handled.request {
        case .signUp(let ref, _, _, _, _, _, _, _, _), .finishLogin(let ref, _, _, _, _, _):
            outbox[ref.loop].append(.close(serial: ref.serial, code: WebSocketCloseCode.tryAgainLater.rawValue, reason: "storage unavailable"))
        default:
            break
        }
    }

    /// A write request refused up front while storage is down.
    private func refuse(_ request: CoreRequest) {
        switch request {
        case .beginSignUp(let ref, let id, _, _, _, _), .beginLogin(let ref, let id, _, _, _), .logout(let ref, let id, _),
             .publish(let ref, let id, _, _, _, _), .sendFriendRequest(let ref, let id, _, _), .markRead(let ref, let id, _, _),
             .answerFriendRequest(let ref, let id, _, _), .cancelFriendRequest(let ref, let id, _), .removeFriend(let ref, let id, _):
            replyUnavailable(ref, id)
        // Feed.
        case .createPost(let ref, let id, _, _, _), .likePost(let ref, let id, _, _), .commentOnPost(let ref, let id, _, _),
             .deletePost(let ref, let id, _):
            replyUnavailable(ref, id)
        // Activities.
        case .activityOn(let ref, let id, _, _, _), .activityOff(let ref, let id, _):
            replyUnavailable(ref, id)
        // Places.
        case .setPlace(let ref, let id, _, _, _, _, _), .removePlace(let ref, let id, _), .reportLocation(let ref, let id, _, _, _, _),
             .reportRegion(let ref, let id, _, _, _):
            replyUnavailable(ref, id)
        // Memories.
        case .createMemory(let ref, let id, _), .updateMemory(let ref, let id, _, _), .deleteMemory(let ref, let id, _),
             .addMemoryPoint(let ref, let id, _, _), .updateMemoryPoint(let ref, let id, _, _, _), .deleteMemoryPoint(let ref, let id, _, _):
            replyUnavailable(ref, id)
        case .authorizePhotoUpload(let caller, _, _), .recordPhoto(let caller, _, _, _):
            metrics.countError("unavailable")
            outbox[caller.loop].append(.photoAccess(serial: caller.serial, .storageUnavailable))
        case .serverPublish(let id, _, _, _):
            replyUnavailable(nil, id)
        case .keyed(let ref, let id, _, _, _):
            replyUnavailable(ref, id)
        default:
            break
        }
    }

    private func replyUnavailable(_ ref: ConnectionRef?, _ requestID: String?) {
        metrics.countError("unavailable")
        let message = "storage is refusing writes; reads still work, try again later"
        if let ref {
            if let requestID { secrets[ref]?[requestID] = nil }
            outbox[ref.loop].append(.send(serial: ref.serial, text: ServerMessage.failure(id: requestID, code: "unavailable", message: message), kind: .reply))
        } else if let requestID, let connection = apiRequests.removeValue(forKey: requestID) {
            let body = ReplyError(code: "unavailable", message: message).httpBody
            outbox[connection.loop].append(.httpResponse(serial: connection.serial, status: 503, body: body))
        }
    }

    /// The size of a page a user read is paid from their read-back budget once it is known.
    private func chargeRead(of request: CoreRequest, _ bytes: Int) {
        guard bytes > 0, let (connection, _) = request.sender,
              let owner = core.budgetOwner(of: connection)
        else { return }
        budgets.chargeRead(bytes, to: owner, now: MonotonicClock.milliseconds())
    }

    /// Sends or hands off one output; returns the size of the reply it made to a connection
    /// (0 for anything else).
    @discardableResult
    private func route(_ output: CoreOutput) -> Int {
        switch output {
        case .reply(let ref, let requestID, let reply):
            if let ref {
                var token: String?
                if let requestID { token = secrets[ref]?[requestID]?.token }
                if let requestID { secrets[ref]?[requestID] = nil }
                if case .failure(let error) = reply { metrics.countError(error.code.rawValue) }
                let text = ReplyEncoding.message(reply, id: requestID, token: token)
                outbox[ref.loop].append(.send(serial: ref.serial, text: text, kind: .reply))
                return text.count
            } else if let requestID, let connection = apiRequests.removeValue(forKey: requestID) {
                let (status, body) = ReplyEncoding.httpResponse(reply)
                outbox[connection.loop].append(.httpResponse(serial: connection.serial, status: status, body: body))
            }
        case .deliver(let publication, let recipients):
            let text = ServerMessage.publicationEvent(
                channel: publication.channel, epoch: publication.epoch, offset: publication.offset, type: publication.type,
                from: publication.from, data: publication.data, time: publication.time, clientID: publication.clientID)
            fanOut(text, to: recipients)
        case .typing(let channel, let user, let recipients):
            fanOut(ServerMessage.typingEvent(channel: channel, user: user, time: WallClock.milliseconds()), to: recipients)
        case .presenceChanged(let user, let online, let recipients):
            fanOut(ServerMessage.presenceEvent(user: user, online: online, time: WallClock.milliseconds()), to: recipients)
        case .verifyPassword(let ref, let requestID, let username, let credentials, let password, let address):
            verifyPassword(ref, requestID, username, credentials, password, address)
        case .hashNewPassword(let ref, let requestID, let username, let email, let password, let address):
            hashNewPassword(ref, requestID, username: username, email: email, password: password, address: address)
        case .closeConnections(let refs, let code, let reason):
            for ref in refs { outbox[ref.loop].append(.close(serial: ref.serial, code: code, reason: reason)) }
        case .sessionAccepted(let ref, let user, let expiresAt):
            let text = ServerMessage.sessionEvent(username: user.username, email: user.email, expiresAt: expiresAt, time: WallClock.milliseconds())
            outbox[ref.loop].append(.send(serial: ref.serial, text: text, kind: .signInOutcome(accepted: true)))
        case .authFailed(let ref, let error):
            metrics.countError(error.code.rawValue)
            let text = ServerMessage.authFailedEvent(code: error.code.rawValue, message: error.message, time: WallClock.milliseconds())
            outbox[ref.loop].append(.send(serial: ref.serial, text: text, kind: .signInOutcome(accepted: false)))
            outbox[ref.loop].append(.close(serial: ref.serial, code: 4001, reason: error.code.rawValue))
        // Feed.
        case .feedEvent(let event, let recipients):
            fanOut(ServerEvent.feed(event).message, to: recipients)
        // Push.
        case .pushNotification(let notification):
            pushGateway?.submit(notification)
        // Memories.
        case .memoryChanged(let change, let recipients):
            fanOut(ServerEvent.memoryChanged(change, time: WallClock.milliseconds()).message, to: recipients)
        case .photoAccess(let caller, let access):
            if case .refused(let error) = access { metrics.countError(error.code.rawValue) }
            outbox[caller.loop].append(.photoAccess(serial: caller.serial, .decided(access)))
        }
        return 0
    }

    /// Frames an event once (and compresses it once, if anyone takes compressed frames), then
    /// gives each loop the same bytes with the list of its recipients.
    private func fanOut(_ text: [UInt8], to recipients: [ConnectionRef]) {
        guard !recipients.isEmpty else { return }
        let compress = deflateConnections.load(ordering: .relaxed) > 0
        let frame = SharedFrame(opcode: .text, payload: text, deflater: compress ? deflater : nil)
        var start = 0
        while start < recipients.count {
            let loopIndex = recipients[start].loop
            var end = start
            while end < recipients.count, recipients[end].loop == loopIndex { end += 1 }
            outbox[loopIndex].append(.fanOut(serials: recipients[start..<end].map(\.serial), frame: frame))
            start = end
        }
    }

    /// Hashes in the login lane; an unknown login (no credentials) is hashed at the cost of a
    /// new password, so that its answer takes as long as a wrong password's.
    private func verifyPassword(
        _ ref: ConnectionRef, _ requestID: String, _ username: Username?, _ credentials: Credentials?, _ password: String, _ address: String
    ) {
        let device = secrets[ref]?[requestID]?.device
        let ttl = Int64(configuration.sessionTTLMilliseconds)
        let iterations = configuration.kdfIterations
        passwordHashes.run(.login) { [self] in
            let matched: Bool
            if let credentials {
                let hash = Crypto.pbkdf2SHA256(password: password, salt: credentials.salt, iterations: credentials.iterations, length: credentials.hash.count)
                matched = Crypto.constantTimeEquals(hash, credentials.hash)
            } else {
                _ = Crypto.pbkdf2SHA256(password: password, salt: Crypto.randomBytes(16), iterations: iterations)
                matched = false
            }
            let token = SessionToken.generate()
            let session = NewSession(tokenHash: SessionToken.hash(token), expiresAt: WallClock.milliseconds() + ttl, device: device)
            submit(
                .finishLogin(ref, requestID: requestID, username: username, passwordMatched: matched, address: address, session: session),
                op: "login", token: matched ? token : nil)
        }
    }

    /// Hashes a signup's password in the signup lane (behind every waiting login), then hands
    /// the core only the hash and the facts its rules need about the password.
    private func hashNewPassword(_ ref: ConnectionRef, _ requestID: String, username: String, email: String, password: String, address: String) {
        let device = secrets[ref]?[requestID]?.device
        let ttl = Int64(configuration.sessionTTLMilliseconds)
        let iterations = configuration.kdfIterations
        passwordHashes.run(.signUp) { [self] in
            let salt = Crypto.randomBytes(16)
            let credentials = Credentials(salt: salt, hash: Crypto.pbkdf2SHA256(password: password, salt: salt, iterations: iterations), iterations: iterations)
            let token = SessionToken.generate()
            let session = NewSession(tokenHash: SessionToken.hash(token), expiresAt: WallClock.milliseconds() + ttl, device: device)
            submit(
                .signUp(ref, requestID: requestID, username: username, email: email, passwordLength: password.count,
                        passwordEqualsUsername: password.lowercased() == username.lowercased(), address: address,
                        credentials: credentials, session: session),
                op: nil, token: token)  // counted in the op's latency once, by its first half
        }
    }

    private func sendOutbox() {
        for index in outbox.indices where !outbox[index].isEmpty {
            let batch = outbox[index]
            outbox[index] = []
            let endpoint = endpoints[index]
            ioLoops[index].execute { endpoint.perform(batch) }
        }
    }
}

extension CoreOutput {
    /// A retried write answered with its first result.
    var isDuplicateReply: Bool {
        switch self {
        case .reply(_, _, .duplicate), .reply(_, _, .alreadyPublished): return true
        default: return false
        }
    }
}

extension CoreRequest {
    /// Requests that lead to a durable command (directly, or for a login or signup through the
    /// request that carries its hash): refused up front while storage refuses writes. The
    /// second halves are not: they end password hashes the core counts.
    var startsAWrite: Bool {
        switch self {
        case .beginSignUp, .beginLogin, .logout, .publish, .serverPublish,
             .sendFriendRequest, .answerFriendRequest, .cancelFriendRequest, .removeFriend, .markRead:
            return true
        // Feed.
        case .createPost, .likePost, .commentOnPost, .deletePost:
            return true
        // Activities.
        case .activityOn, .activityOff, .expireActivities:
            return true
        // Places.
        case .setPlace, .removePlace, .reportLocation, .reportRegion:
            return true
        // Memories. A photo upload is refused before its body is read, not after it was stored.
        case .createMemory, .updateMemory, .deleteMemory, .addMemoryPoint, .updateMemoryPoint, .deleteMemoryPoint,
             .authorizePhotoUpload, .recordPhoto:
            return true
        case .keyed(_, _, _, _, let write):
            return write.startsAWrite
        default: return false
        }
    }

    /// The connection and request id a reply will carry, for requests that have both.
    var connectionAndRequestID: (ConnectionRef, String)? {
        switch self {
        case .beginSignUp(let ref, let id, _, _, _, _): return (ref, id)
        case .signUp(let ref, let id, _, _, _, _, _, _, _): return (ref, id)
        case .beginLogin(let ref, let id, _, _, _): return (ref, id)
        case .finishLogin(let ref, let id, _, _, _, _): return (ref, id)
        default: return nil
        }
    }
}
