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
    private var connections: [UInt64: Connection] = [:]
    private var nextSerial: UInt64 = 0

    /// Per-connection protocol state.
    ///
    /// Replies go out in the order of the requests (protocol.md): requests forwarded to the core
    /// come back in the order sent, and a reply made here (ping, a refused request) waits for
    /// the core's replies to the requests before it. A sign-in in progress (signup and login go
    /// through the password workers; an upgrade token through the core) holds the requests
    /// after it, so a client that pipelines them gets them run signed in.
    final class Session {
        let serial: UInt64
        var bucket: TokenBucket
        var refusalsInARow = 0
        let takesSharedDeflate: Bool
        var forwarded = 0
        var answered = 0
        var heldReplies: [(after: Int, text: [UInt8])] = []
        /// The number (in `forwarded`) of the sign-in request being decided; 0 for an upgrade
        /// token; nil when no sign-in is pending.
        var pendingSignIn: Int?
        var waiting: [Waiting] = []
        /// The bytes of `waiting`, requests decompressed as they are held.
        var waitingBytes = 0

        init(serial: UInt64, bucket: TokenBucket, takesSharedDeflate: Bool) {
            self.serial = serial
            self.bucket = bucket
            self.takesSharedDeflate = takesSharedDeflate
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
        let serial = register(connection)
        let session = Session(
            serial: serial,
            bucket: TokenBucket(rate: configuration.requestsPerSecond, burst: configuration.requestBurst, now: connection.context.loop.now),
            takesSharedDeflate: connection.acceptsSharedDeflatedFrames)
        connection.endpointState = session
        if session.takesSharedDeflate { runner.deflateConnections.add(1, ordering: .relaxed) }
        let ref = ConnectionRef(loop: loopIndex, serial: serial)
        runner.submit(.connectionOpened(ref, address: connection.peer), op: nil)
        if let token = Self.token(in: request) {
            session.pendingSignIn = 0
            runner.submit(.authenticate(ref, requestID: nil, tokenHash: SessionToken.hash(token)), op: "auth")
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
        connections[session.serial] = nil
        _ = releaseWaiting(session)
        if session.takesSharedDeflate { runner.deflateConnections.subtract(1, ordering: .relaxed) }
        runner.submit(.connectionClosed(ConnectionRef(loop: loopIndex, serial: session.serial)), op: nil)
    }

    /// Requests forwarded and not answered, plus those waiting behind a sign-in; an upgrade
    /// token being checked counts as one (requests may wait behind it).
    func requestsUnanswered(_ connection: Connection) -> Int {
        guard let session = connection.endpointState as? Session else { return 0 }
        return session.forwarded - session.answered + session.waiting.count + (session.pendingSignIn == 0 ? 1 : 0)
    }

    /// The core refuses publishes to this reader's channels while it is behind; its
    /// `connectionClosed` clears that.
    func connectionBehindChanged(_ connection: Connection) {
        guard let session = connection.endpointState as? Session else { return }
        runner.readerBehindChanged(ConnectionRef(loop: loopIndex, serial: session.serial), behind: connection.isBehind)
    }

    /// Gives an HTTP API caller a serial so its response can find it.
    func register(_ connection: Connection) -> UInt64 {
        nextSerial += 1
        connections[nextSerial] = connection
        return nextSerial
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
        } else if session.answered == session.forwarded {
            connection.send(.text, text)
        } else {
            session.heldReplies.append((session.forwarded, text))
        }
    }

    /// Counts a request as on its way to the core; returns its number.
    @discardableResult
    private func forward(_ session: Session) -> Int {
        session.forwarded += 1
        return session.forwarded
    }

    /// The core answered a forwarded request: send what was waiting for it, and once a sign-in
    /// is decided, run the requests that arrived during it.
    private func answered(_ session: Session, _ connection: Connection) {
        session.answered += 1
        while let first = session.heldReplies.first, first.after <= session.answered {
            session.heldReplies.removeFirst()
            connection.send(.text, first.text)
        }
        if let signIn = session.pendingSignIn, signIn > 0, session.answered >= signIn {
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

    private func dispatch(_ request: ClientRequest, session: Session, connection: Connection) {
        let ref = ConnectionRef(loop: loopIndex, serial: session.serial)
        let id = request.id
        let op = request.operation.name
        if case .ping = request.operation {
            reply(ServerMessage.success(id: id, result: ReplyResult.time(WallClock.milliseconds()).json), session, connection)
            return
        }
        let number = forward(session)
        // Every submission below goes through this one, which wraps a write sent with a
        // `client_id` as a keyed write.
        let runner = RequestSubmission(runner: self.runner, connection: ref, requestID: id, op: op, clientID: request.clientID)
        switch request.operation {
        case .ping:
            break
        case .signup(let username, let email, let password, let device):
            session.pendingSignIn = number
            runner.submit(.beginSignUp(ref, requestID: id, username: username, email: email, password: password, address: connection.peer), op: op, device: device)
        case .login(let login, let password, let device):
            session.pendingSignIn = number
            runner.submit(.beginLogin(ref, requestID: id, login: login, address: connection.peer, password: password), op: op, device: device)
        case .auth(let token):
            runner.submit(.authenticate(ref, requestID: id, tokenHash: SessionToken.hash(token)), op: op)
        case .logout(let all):
            runner.submit(.logout(ref, requestID: id, all: all), op: op)
        case .whoami:
            runner.submit(.whoami(ref, requestID: id), op: op)
        case .subscribe(let channel, let since):
            runner.submit(.subscribe(ref, requestID: id, channel: channel, since: since.map { ChannelPosition(epoch: $0.epoch, offset: $0.offset) }), op: op)
        case .unsubscribe(let channel):
            runner.submit(.unsubscribe(ref, requestID: id, channel: channel), op: op)
        case .publish(let channel, let type, let data):
            // A publication keeps its own client_id (readers see it): not a kept result.
            self.runner.submit(.publish(ref, requestID: id, channel: channel, type: type, data: data, clientID: request.clientID), op: op)
        case .history(let channel, let before, let limit):
            runner.submit(.history(ref, requestID: id, channel: channel, before: before, limit: limit), op: op)
        case .presence(let channel):
            runner.submit(.presence(ref, requestID: id, channel: channel), op: op)
        case .userSearch(let prefix, let limit):
            runner.submit(.searchUsers(ref, requestID: id, prefix: prefix, limit: limit), op: op)
        case .friendRequest(let user, let message):
            runner.submit(.sendFriendRequest(ref, requestID: id, user: user, message: message), op: op)
        case .friendRequests:
            runner.submit(.listFriendRequests(ref, requestID: id), op: op)
        case .friendAccept(let user):
            runner.submit(.answerFriendRequest(ref, requestID: id, user: user, accept: true), op: op)
        case .friendDecline(let user):
            runner.submit(.answerFriendRequest(ref, requestID: id, user: user, accept: false), op: op)
        case .friendCancel(let user):
            runner.submit(.cancelFriendRequest(ref, requestID: id, user: user), op: op)
        case .friendRemove(let user):
            runner.submit(.removeFriend(ref, requestID: id, user: user), op: op)
        case .friends:
            runner.submit(.listFriends(ref, requestID: id), op: op)
        case .markRead(let channel, let offset):
            runner.submit(.markRead(ref, requestID: id, channel: channel, offset: offset), op: op)
        case .unread:
            runner.submit(.unreadCounts(ref, requestID: id), op: op)
        case .typing(let channel):
            runner.submit(.typing(ref, requestID: id, channel: channel), op: op)
        // Feed.
        case .post(let text, let activity, let at):
            runner.submit(.createPost(ref, requestID: id, text: text, activity: activity, at: at), op: op)
        case .feed(let before, let limit):
            runner.submit(.listFeed(ref, requestID: id, before: before, limit: limit), op: op)
        case .like(let post, let liked):
            runner.submit(.likePost(ref, requestID: id, post: post, liked: liked), op: op)
        case .comment(let post, let text):
            runner.submit(.commentOnPost(ref, requestID: id, post: post, text: text), op: op)
        case .comments(let post, let before, let limit):
            runner.submit(.listComments(ref, requestID: id, post: post, before: before, limit: limit), op: op)
        case .postDelete(let post):
            runner.submit(.deletePost(ref, requestID: id, post: post), op: op)
        // Activities.
        case .activities:
            runner.submit(.listActivities(ref, requestID: id), op: op)
        case .activityOn(let activity, let friends, let expiresIn):
            runner.submit(.activityOn(ref, requestID: id, activity: activity, friends: friends, expiresInSeconds: expiresIn), op: op)
        case .activityOff(let activity):
            runner.submit(.activityOff(ref, requestID: id, activity: activity), op: op)
        case .matches(let byActivity):
            runner.submit(.listMatches(ref, requestID: id, byActivity: byActivity), op: op)
        // Places.
        case .placeSet(let placeID, let label, let latitude, let longitude, let radius):
            runner.submit(.setPlace(ref, requestID: id, id: placeID, label: label, latitude: latitude, longitude: longitude, radius: radius), op: op)
        case .placeRemove(let placeID):
            runner.submit(.removePlace(ref, requestID: id, id: placeID), op: op)
        case .places(let user):
            runner.submit(.listPlaces(ref, requestID: id, user: user), op: op)
        case .locationFix(let latitude, let longitude, let accuracy, let time):
            runner.submit(.reportLocation(ref, requestID: id, latitude: latitude, longitude: longitude, accuracy: accuracy, time: time), op: op)
        case .region(let placeID, let entered, let time):
            runner.submit(.reportRegion(ref, requestID: id, placeID: placeID, entered: entered, time: time), op: op)
        case .whereIs(let user):
            runner.submit(.locate(ref, requestID: id, user: user), op: op)
        // Memories.
        case .memoryCreate(let arguments):
            runner.submit(.createMemory(ref, requestID: id, MemoryRequests.fields(arguments)), op: op)
        case .memoryUpdate(let memory, let arguments):
            runner.submit(.updateMemory(ref, requestID: id, memory: memory, MemoryRequests.fields(arguments)), op: op)
        case .memoryDelete(let memory):
            runner.submit(.deleteMemory(ref, requestID: id, memory: memory), op: op)
        case .memories:
            runner.submit(.listMemories(ref, requestID: id), op: op)
        case .memory(let memory):
            runner.submit(.readMemory(ref, requestID: id, memory: memory), op: op)
        case .pointAdd(let memory, let arguments):
            runner.submit(.addMemoryPoint(ref, requestID: id, memory: memory, MemoryRequests.fields(arguments)), op: op)
        case .pointUpdate(let memory, let point, let arguments):
            runner.submit(.updateMemoryPoint(ref, requestID: id, memory: memory, point: point, MemoryRequests.fields(arguments)), op: op)
        case .pointDelete(let memory, let point):
            runner.submit(.deleteMemoryPoint(ref, requestID: id, memory: memory, point: point), op: op)
        }
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
                case .reply:
                    answered(session, connection)
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
                connections.removeValue(forKey: serial)?.respondJSON(status: status, body: body)
            // Memories.
            case .photoAccess(let serial, let outcome):
                connections.removeValue(forKey: serial)?.photoAccessDecided(outcome)
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
