import HuddleCore
import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// `/v1`: the Huddle protocol (protocol.md) on one I/O loop. Decoding, validation, rate
/// limiting and pings happen here, in parallel on every loop; everything that reads or changes
/// shared state goes to the core thread as a `CoreRequest`, and its outputs come back in
/// batches (`perform`). Confined to its loop: other threads only queue closures on that loop.
// Sendable: other threads only capture it in closures they queue on its loop (`loop.execute`).
final class ProtocolEndpoint: WebSocketEndpoint, @unchecked Sendable {
    static let subprotocol = "huddle.v1"
    static let tokenSubprotocolPrefix = "huddle.auth."

    let maxMessageSize: Int
    private let loopIndex: Int
    private let runner: CoreRunner
    private let configuration: ServerConfiguration
    private let metrics: ServerMetrics
    private let limits = ProtocolLimits()
    /// Connections this loop serves for the core: WebSocket clients and HTTP API callers.
    /// Unchecked (a run-time exclusivity check per delivery otherwise): one thread, and no
    /// access spans a call out (lookups return the connection, then it is used).
    @exclusivity(unchecked) private var connections = ConnectionTable()
    /// Requests decoded in this loop turn, handed to the core together at its end
    /// (`handOverStaged`). Everything else this endpoint asks of the core hands them over
    /// first, so the core sees each connection's requests, opens and closes in order.
    private var staged: [CoreRunner.Submission] = []
    private var handsOverAtTurnEnd = false

    /// Per-connection protocol state.
    ///
    /// Replies go out in the order of the requests (`ReplyOrder`). A sign-in in progress (signup and login go
    /// through the password workers; an upgrade token through the core) holds the requests
    /// after it, so a client that pipelines them gets them run signed in.
    final class Session {
        let serial: UInt64
        var bucket: TokenBucket
        var refusalsInARow = 0
        let takesSharedDeflate: Bool
        var replies = ReplyOrder()
        /// The number (in `replies.forwarded`) of the sign-in request being decided; 0 for an upgrade
        /// token; nil when no sign-in is pending.
        var pendingSignIn: Int?
        var waiting: [Waiting] = []
        /// The bytes of `waiting`, requests decompressed as they are held.
        var waitingBytes = 0
        /// The client's address when the WebSocket opened: what sign-ups and logins are
        /// throttled by (the connection itself does not store it).
        let address: String

        init(serial: UInt64, bucket: TokenBucket, takesSharedDeflate: Bool, address: String) {
            self.serial = serial
            self.bucket = bucket
            self.takesSharedDeflate = takesSharedDeflate
            self.address = address
        }
    }

    /// What arrived while a sign-in is pending, in order: a request to run once it is decided,
    /// or the reply to one refused on arrival (it must not overtake the replies before it).
    enum Waiting {
        case request([UInt8])
        case reply([UInt8])

        var bytes: [UInt8] {
            switch self {
            case .request(let bytes), .reply(let bytes): bytes
            }
        }
    }

    /// Refusals in a row after which a client that ignores `rate_limited` is closed (1008).
    private static let refusalsBeforeClose = 1000
    /// Requests a connection may pipeline behind a sign-in still being decided (those refused
    /// on arrival included): the rate limit's burst and then some.
    private static let maxWaitingDuringSignIn = 200
    /// Bytes (decompressed) of the requests one connection may have waiting behind a sign-in
    /// still being decided: one message of the largest size, or many small ones. Beyond it a
    /// request is refused (`signing_in`): what a client pipelines after a login is its first
    /// few requests, and a request is held decompressed, so without this bound ~12 KB of
    /// compressed frames pin 64 KiB each.
    private static let maxWaitingBytesDuringSignIn = 64 * 1024
    /// The same, all connections of the server together (`busy`, with `retry_after_ms`).
    private static let maxWaitingBytesDuringSignInOverall = 16 * 1024 * 1024
    private static let waitingRetryMilliseconds: Int64 = 1_000

    init(loopIndex: Int, runner: CoreRunner, configuration: ServerConfiguration, metrics: ServerMetrics) {
        self.loopIndex = loopIndex
        self.runner = runner
        self.configuration = configuration
        self.metrics = metrics
        maxMessageSize = configuration.maxMessageSize
    }

    // MARK: Handshake and lifecycle

    func accept(_ request: WebSocketHandshake.Request) -> EndpointAcceptance {
        let offered = request.subprotocols
        if offered.isEmpty { return .accept(subprotocol: nil) }
        guard offered.contains(Self.subprotocol) else {
            return .reject(status: 400, reason: "this endpoint speaks the \(Self.subprotocol) subprotocol")
        }
        return .accept(subprotocol: Self.subprotocol)
    }

    func connectionOpened(_ connection: Connection, request: WebSocketHandshake.Request) {
        handOverStaged()
        let serial = register(connection)
        let session = Session(
            serial: serial,
            bucket: TokenBucket(rate: configuration.requestsPerSecond, burst: configuration.requestBurst, now: connection.context.loop.now),
            takesSharedDeflate: connection.acceptsSharedDeflatedFrames, address: connection.peer)
        connection.endpointState = session
        if session.takesSharedDeflate { runner.deflateConnections.add(1, ordering: .relaxed) }
        let ref = ConnectionRef(loop: loopIndex, serial: serial)
        runner.submit(CoreRequest(connection: ref, .connectionOpened(address: session.address)), op: nil)
        if let token = Self.token(in: request) {
            session.pendingSignIn = 0
            runner.submit(CoreRequest(connection: ref, .authenticate(tokenHash: SessionToken.hash(token))), op: "auth")
        }
    }

    /// A token from `Authorization: Bearer …` or the `huddle.auth.…` subprotocol (browsers).
    private static func token(in request: WebSocketHandshake.Request) -> String? {
        if let authorization = request.head.headers[first: "authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]) }
        }
        for offered in request.subprotocols where offered.hasPrefix(tokenSubprotocolPrefix) {
            return String(offered.dropFirst(tokenSubprotocolPrefix.count))
        }
        return nil
    }

    func connectionClosed(_ connection: Connection) {
        guard let session = connection.endpointState as? Session else { return }
        handOverStaged()
        connections.remove(session.serial)
        _ = releaseWaiting(session)
        if session.takesSharedDeflate { runner.deflateConnections.subtract(1, ordering: .relaxed) }
        runner.submit(CoreRequest(connection: ConnectionRef(loop: loopIndex, serial: session.serial), .connectionClosed), op: nil)
    }

    /// Requests forwarded and not answered, plus those waiting behind a sign-in; an upgrade
    /// token being checked counts as one (requests may wait behind it).
    func requestsUnanswered(_ connection: Connection) -> Int {
        guard let session = connection.endpointState as? Session else { return 0 }
        return session.replies.unanswered + session.waiting.count + (session.pendingSignIn == 0 ? 1 : 0)
    }

    /// The core refuses publishes to this reader's channels while it is behind; its
    /// `connectionClosed` clears that.
    func connectionBehindChanged(_ connection: Connection) {
        guard let session = connection.endpointState as? Session else { return }
        handOverStaged()
        runner.readerBehindChanged(ConnectionRef(loop: loopIndex, serial: session.serial), behind: connection.isBehind)
    }

    /// Gives an HTTP API caller a serial so its response can find it.
    func register(_ connection: Connection) -> UInt64 {
        connections.insert(connection)
    }

    // MARK: Requests

    func received(_ opcode: WebSocketOpcode, _ payload: [UInt8], from connection: Connection) {
        guard let session = connection.endpointState as? Session else { return }
        guard opcode == .text else {
            metrics.countError("binary_frame")
            connection.close(.unsupportedData, reason: "the huddle.v1 protocol uses text frames")
            return
        }
        if let retryAfter = session.bucket.take(now: connection.context.loop.now) {
            session.refusalsInARow += 1
            metrics.countError("rate_limited")
            if session.refusalsInARow >= Self.refusalsBeforeClose {
                connection.close(.policyViolation, reason: "rate limit ignored")
                return
            }
            let id = RequestDecoder.decode(payload, limits: limits).requestID
            reply(ServerMessage.failure(id: id, code: "rate_limited", message: "over \(Int(configuration.requestsPerSecond)) requests per second", retryAfterMilliseconds: retryAfter), session, connection)
            return
        }
        session.refusalsInARow = 0
        if session.pendingSignIn != nil {
            if let refusal = waitingRefusal(payload.count, session) {
                metrics.countError(refusal.code)
                let id = RequestDecoder.decode(payload, limits: limits).requestID
                reply(ServerMessage.failure(id: id, code: refusal.code, message: refusal.message, retryAfterMilliseconds: refusal.retryAfter), session, connection)
            } else {
                hold(.request(payload), session, connection)
            }
        } else {
            handle(payload, session: session, connection: connection)
        }
    }

    /// Keeps what arrived during a pending sign-in for when it is decided.
    private func hold(_ entry: Waiting, _ session: Session, _ connection: Connection) {
        guard session.waiting.count < Self.maxWaitingDuringSignIn else {
            connection.close(.policyViolation, reason: "too many requests while signing in")
            return
        }
        session.waiting.append(entry)
        session.waitingBytes += entry.bytes.count
        metrics.heldBehindSignIn.add(entry.bytes.count, ordering: .relaxed)
    }

    /// Why a request may not wait behind the pending sign-in, if it may not.
    private func waitingRefusal(_ size: Int, _ session: Session) -> (code: String, message: String, retryAfter: Int64?)? {
        if session.waitingBytes + size > Self.maxWaitingBytesDuringSignIn {
            let message = "over \(Self.maxWaitingBytesDuringSignIn / 1024) KiB of requests wait for the sign-in; send this one after its reply"
            return ("signing_in", message, nil)
        }
        if metrics.heldBehindSignIn.load(ordering: .relaxed) + size > Self.maxWaitingBytesDuringSignInOverall {
            return ("busy", "too many requests wait for sign-ins on this server; try again later", Self.waitingRetryMilliseconds)
        }
        return nil
    }

    /// Takes the requests held behind a sign-in off the server-wide count.
    private func releaseWaiting(_ session: Session) -> [Waiting] {
        let waiting = session.waiting
        metrics.heldBehindSignIn.subtract(session.waitingBytes, ordering: .relaxed)
        session.waiting = []
        session.waitingBytes = 0
        return waiting
    }

    private func handle(_ payload: [UInt8], session: Session, connection: Connection) {
        switch RequestDecoder.decode(payload, limits: limits) {
        case .failure(let error):
            metrics.countError(error.code)
            reply(ServerMessage.failure(id: error.id, code: error.code, message: error.message), session, connection)
        case .success(let request):
            dispatch(request, session: session, connection: connection)
        }
    }

    /// A reply made on this loop: sent now, or after the core has answered every request that
    /// came before it (and, during a sign-in, after the requests held behind it).
    private func reply(_ text: [UInt8], _ session: Session, _ connection: Connection) {
        if session.pendingSignIn != nil {
            hold(.reply(text), session, connection)
        } else if let text = session.replies.local(text) {
            connection.send(.text, text)
        }
    }


    /// The core answered a forwarded request: send what was waiting for it, and once a sign-in
    /// is decided, run the requests that arrived during it.
    private func answered(_ requestID: String?, _ session: Session, _ connection: Connection) {
        for text in session.replies.coreAnswered(requestID) { connection.send(.text, text) }
        if let signIn = session.pendingSignIn, signIn > 0, session.replies.answered >= signIn {
            signInSettled(session, connection)
        }
    }

    private func signInSettled(_ session: Session, _ connection: Connection) {
        session.pendingSignIn = nil
        var waiting = releaseWaiting(session)[...]
        while let next = waiting.popFirst() {
            switch next {
            case .request(let payload): handle(payload, session: session, connection: connection)
            case .reply(let text): reply(text, session, connection)
            }
            if session.pendingSignIn != nil {
                // Another sign-in: the rest wait for it, counted again.
                for entry in waiting { hold(entry, session, connection) }
                return
            }
        }
    }

    /// Hands a decoded request to the core as it is; only what needs this loop's knowledge is
    /// made here: `ping`, and sign-ins (the token hashed, the peer's address, the device label
    /// kept out of the core).
    private func dispatch(_ request: ClientRequest, session: Session, connection: Connection) {
        let ref = ConnectionRef(loop: loopIndex, serial: session.serial)
        let id = request.id
        let op = request.operation.name
        switch request.operation {
        case .ping:
            reply(ServerMessage.success(id: id, result: ReplyResult.time(WallClock.milliseconds()).json), session, connection)
            return
        case .signup(let username, let email, let password, let device):
            handOverStaged()
            session.pendingSignIn = session.replies.forward(id)
            let body = CoreRequestBody.beginSignUp(username: username, email: email, password: password, address: session.address)
            runner.submit(CoreRequest(connection: ref, requestID: id, body), op: op, device: device)
        case .login(let login, let password, let device):
            handOverStaged()
            session.pendingSignIn = session.replies.forward(id)
            let body = CoreRequestBody.beginLogin(login: login, address: session.address, password: password)
            runner.submit(CoreRequest(connection: ref, requestID: id, body), op: op, device: device)
        case .auth(let token):
            handOverStaged()
            _ = session.replies.forward(id)
            runner.submit(CoreRequest(connection: ref, requestID: id, .authenticate(tokenHash: SessionToken.hash(token))), op: op)
        // Identities: the token is verified off the loop, then the core decides.
        case .identitySignIn(let token, let nonce, let username, let device):
            handOverStaged()
            session.pendingSignIn = session.replies.forward(id)
            runner.verifyIdentity(.idToken(token, nonce: nonce), for: .signIn(username: username), ref: ref, requestID: id, op: op, device: device, peer: connection.peer)
        case .identityLink(let token, let nonce):
            handOverStaged()
            _ = session.replies.forward(id)
            runner.verifyIdentity(.idToken(token, nonce: nonce), for: .link, ref: ref, requestID: id, op: op, device: nil, peer: connection.peer)
        case .appAuth(let token, let device):
            handOverStaged()
            session.pendingSignIn = session.replies.forward(id)
            runner.verifyIdentity(.appToken(token), for: .appAuth, ref: ref, requestID: id, op: op, device: device, peer: connection.peer)
        case .accountDeleteWithIdentity(let token, let nonce):
            handOverStaged()
            _ = session.replies.forward(id)
            runner.verifyIdentity(.idToken(token, nonce: nonce), for: .deleteAccount, ref: ref, requestID: id, op: op, device: nil, peer: connection.peer)
        // Passwords: the code is drawn (and a typed one hashed) here; the core sees only hashes.
        case .passwordResetRequest(let login):
            handOverStaged()
            _ = session.replies.forward(id)
            let code = PasswordResetCode.generate()
            let expiresAt = WallClock.milliseconds() + configuration.passwordResetCodeTTLMilliseconds
            let body = CoreRequestBody.requestPasswordReset(login: login, address: connection.peer, codeHash: PasswordResetCode.hash(code), expiresAt: expiresAt)
            runner.submit(CoreRequest(connection: ref, requestID: id, body), op: op, resetCode: code)
        case .passwordReset(let login, let code, let newPassword):
            handOverStaged()
            _ = session.replies.forward(id)
            let body = CoreRequestBody.beginPasswordReset(
                login: login, address: connection.peer, codeHash: PasswordResetCode.hash(code), newPassword: newPassword)
            runner.submit(CoreRequest(connection: ref, requestID: id, body), op: op)
        default:
            _ = session.replies.forward(id)
            stage(CoreRequest(request, on: ref), op: op, on: connection.context.loop)
        }
    }

    private func stage(_ request: CoreRequest, op: String, on loop: EventLoop) {
        if !handsOverAtTurnEnd {
            handsOverAtTurnEnd = true
            loop.onTurnEnd { [unowned self] in handOverStaged() }
        }
        staged.append(CoreRunner.Submission(request: request, op: op, submitted: MonotonicClock.nanoseconds()))
    }

    /// Hands the staged requests to the core, in order.
    private func handOverStaged() {
        guard !staged.isEmpty else { return }
        let batch = staged
        staged = []
        runner.submit(batch)
    }

    // MARK: Outputs from the core

    func perform(_ batch: [LoopDelivery]) {
        for delivery in batch {
            switch delivery {
            case .send(let serial, let text, let kind):
                guard let connection = connections[serial] else { continue }
                connection.send(.text, text)
                guard let session = connection.endpointState as? Session else { continue }
                switch kind {
                case .reply(let requestID):
                    answered(requestID, session, connection)
                case .event:
                    break
                case .signInOutcome(let accepted):
                    if accepted {
                        signInSettled(session, connection)
                    } else {
                        _ = releaseWaiting(session)  // the connection closes with 4001 next
                    }
                }
            case .fanOut(let serials, let frame):
                for serial in serials { connections[serial]?.sendShared(frame) }
                metrics.loop(loopIndex).deliveries.add(serials.count, ordering: .relaxed)
            case .close(let serial, let code, let reason):
                connections[serial]?.close(WebSocketCloseCode(rawValue: code), reason: reason)
            case .httpResponse(let serial, let status, let body):
                connections.remove(serial)?.respondJSON(status: status, body: body)
            // Memories.
            case .photoAccess(let serial, let outcome):
                connections.remove(serial)?.photoAccessDecided(outcome)
            }
        }
    }
}

extension Result where Success == ClientRequest, Failure == RequestError {
    /// The request's id whether or not it decoded, for replies to refused requests.
    var requestID: String? {
        switch self {
        case .success(let request): return request.id
        case .failure(let error): return error.id
        }
    }
}
