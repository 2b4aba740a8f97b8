import HuddleCore
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
final class CoreRunner: @unchecked Sendable {
    let loop: EventLoop
    private var thread: LoopThread?
    private let core: HuddleCore
    private let ioLoops: [EventLoop]
    /// One per I/O loop; set before the thread starts.
    private var endpoints: [ProtocolEndpoint] = []
    let passwordWorkers: PasswordWorkers
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

    private struct PendingSecrets {
        var token: String?
        var device: String?

        mutating func merge(token: String?, device: String?) {
            if let token { self.token = token }
            if let device { self.device = device }
        }
    }

    init(configuration: ServerConfiguration, ioLoops: [EventLoop], metrics: ServerMetrics, logger: Logger) throws {
        self.configuration = configuration
        self.ioLoops = ioLoops
        self.metrics = metrics
        self.logger = logger
        loop = try EventLoop(index: ioLoops.count, readBufferSize: 16)
        core = HuddleCore(configuration: configuration.core)
        passwordWorkers = try PasswordWorkers(count: 2)
        outbox = Array(repeating: [], count: ioLoops.count)
        loop.onTurnEnd { [unowned self] in self.sendOutbox() }
        loop.schedule(after: 250, repeating: 250) { [unowned self] in self.process(.tick, op: nil, submitted: 0) }
    }

    func attach(_ endpoints: [ProtocolEndpoint]) { self.endpoints = endpoints }

    func start() throws {
        thread = try LoopThread.spawn(name: "huddle-core") { [loop] in loop.run() }
    }

    func stop() {
        loop.stop()
        thread?.join()
        passwordWorkers.stop()
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
        let step = core.handle(request, at: WallClock.milliseconds())
        for output in step.outputs { route(output) }
        if case .connectionClosed(let ref) = request { secrets[ref] = nil }
        if let op, submitted > 0 {
            metrics.observe(op: op, seconds: Double(MonotonicClock.nanoseconds() - submitted) / 1e9)
        }
    }

    private func route(_ output: CoreOutput) {
        switch output {
        case .reply(let ref, let requestID, let reply):
            if let ref {
                var token: String?
                if let requestID { token = secrets[ref]?[requestID]?.token }
                if let requestID { secrets[ref]?[requestID] = nil }
                if case .failure(let error) = reply { metrics.countError(error.code.rawValue) }
                outbox[ref.loop].append(.send(serial: ref.serial, text: ReplyEncoding.message(reply, id: requestID, token: token)))
            } else if let requestID, let connection = apiRequests.removeValue(forKey: requestID) {
                let (status, body) = ReplyEncoding.httpResponse(reply)
                outbox[connection.loop].append(.httpResponse(serial: connection.serial, status: status, body: body))
            }
        case .deliver(let publication, let recipients):
            let text = ServerMessage.publicationEvent(
                channel: publication.channel, epoch: publication.epoch, offset: publication.offset, type: publication.type,
                from: publication.from, data: publication.data, time: publication.time)
            fanOut(text, to: recipients)
        case .presenceChanged(let user, let online, let recipients):
            fanOut(ServerMessage.presenceEvent(user: user, online: online, time: WallClock.milliseconds()), to: recipients)
        case .verifyPassword(let ref, let requestID, let username, let credentials, let password, let address):
            verifyPassword(ref, requestID, username, credentials, password, address)
        case .closeConnections(let refs, let code, let reason):
            for ref in refs { outbox[ref.loop].append(.close(serial: ref.serial, code: code, reason: reason)) }
        case .sessionAccepted(let ref, let user, let expiresAt):
            let text = ServerMessage.sessionEvent(username: user.username, email: user.email, expiresAt: expiresAt, time: WallClock.milliseconds())
            outbox[ref.loop].append(.send(serial: ref.serial, text: text))
        case .authFailed(let ref, let error):
            metrics.countError(error.code.rawValue)
            let text = ServerMessage.authFailedEvent(code: error.code.rawValue, message: error.message, time: WallClock.milliseconds())
            outbox[ref.loop].append(.send(serial: ref.serial, text: text))
            outbox[ref.loop].append(.close(serial: ref.serial, code: 4001, reason: error.code.rawValue))
        }
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

    private func verifyPassword(
        _ ref: ConnectionRef, _ requestID: String, _ username: Username, _ credentials: Credentials, _ password: String, _ address: String
    ) {
        let device = secrets[ref]?[requestID]?.device
        let ttl = Int64(configuration.sessionTTLMilliseconds)
        passwordWorkers.run { [self] in
            let hash = Crypto.pbkdf2SHA256(password: password, salt: credentials.salt, iterations: credentials.iterations, length: credentials.hash.count)
            let matched = Crypto.constantTimeEquals(hash, credentials.hash)
            let token = SessionToken.generate()
            let session = NewSession(tokenHash: SessionToken.hash(token), expiresAt: WallClock.milliseconds() + ttl, device: device)
            submit(
                .finishLogin(ref, requestID: requestID, username: username, passwordMatched: matched, address: address, session: session),
                op: "login", token: matched ? token : nil)
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

extension CoreRequest {
    /// The connection and request id a reply will carry, for requests that have both.
    var connectionAndRequestID: (ConnectionRef, String)? {
        switch self {
        case .signUp(let ref, let id, _, _, _, _, _, _): return (ref, id)
        case .beginLogin(let ref, let id, _, _, _): return (ref, id)
        case .finishLogin(let ref, let id, _, _, _, _): return (ref, id)
        default: return nil
        }
    }
}
