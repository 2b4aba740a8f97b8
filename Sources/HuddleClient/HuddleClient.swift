import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// A Huddle protocol client (protocol.md) that stays connected: it signs in, matches replies
/// to requests with timeouts, and when the connection drops it reconnects with exponential
/// backoff and jitter, signs in again with the session's token, and resumes every subscription
/// from the last publication it delivered, so the application sees each publication once, in
/// order, with no gap — or is told (`recovered: false`) when the server could not replay what
/// was missed. A refused session stops it instead of retrying.
///
/// Confined to its event loop, like `WebSocketClientConnection`: create it anywhere, but call
/// `start()` and everything else on the loop's thread; every callback runs there. It holds no
/// thread and no timer of its own (one sweep per loop checks every client's deadlines), and an
/// idle client keeps only its subscriptions' positions, so one loop can drive thousands.
///
/// Typed operations live in extensions by feature area (`HuddleClient+Accounts.swift`,
/// `+Channels`, `+Friends`, `+Chat`, `+Feed`, `+Activities`, `+Places`), each a thin layer over
/// `request(_:_:resendAfterReconnect:decode:completion:)`.
///
/// What survives a reconnect: channels (inboxes with their friend and match notices, chat
/// rooms, `loc:` place changes) resume exactly; live-only events — the feed's, `presence`,
/// `typing` — sent while the connection was down are gone, which `HuddleEvent.connected`
/// says with `resumed: true`: reload the feed then.
public final class HuddleClient {
    public enum State: Sendable, Equatable {
        /// Created; `start()` not called yet.
        case idle
        /// Opening a connection (TCP, TLS, upgrade).
        case connecting
        /// Open; the token or password is being checked.
        case signingIn
        /// Requests flow.
        case ready
        /// Waiting before the next attempt.
        case waiting
        case stopped
    }

    public let loop: EventLoop
    public private(set) var configuration: HuddleClientConfiguration
    /// Events for the application, on the loop thread, in order.
    public var onEvent: ((HuddleEvent) -> Void)?
    public private(set) var state: State = .idle
    /// Who the client is signed in as; nil while anonymous.
    public private(set) var user: HuddleUser?
    /// The session token presented on every (re)connection; nil while anonymous.
    public private(set) var token: String?

    private var connection: WebSocketClientConnection?
    private var context: ClientLoopContext?
    private var ledger = SubscriptionLedger()
    /// Requests waiting for a ready connection, in call order.
    private var queued: [OutgoingRequest] = []
    /// Requests sent on the current connection, in send order (the order of their replies).
    private var inFlight: [OutgoingRequest] = []
    private var nextRequestNumber: UInt64 = 0
    /// Attempts since the last ready connection that ended before becoming ready.
    private var failedAttempts = 0
    private var retryAt: Int64 = 0
    private var signInDeadline: Int64 = 0
    /// When the last frame from the server arrived.
    private var lastHeard: Int64 = 0
    private var pingOutstanding = false
    /// Why the connection is being dropped by us, for the reconnecting event.
    private var dropReason: String?
    /// The refusal the server explained before closing with 4001 (`auth_failed`).
    private var refusal: (code: String, message: String)?
    /// A logout succeeded: the 4001 that follows is expected, not a refusal.
    private var signingOut = false
    /// A refused token has been replaced by a password login once since the last ready connection.
    private var passwordRetried = false
    /// Resubscribes refused with `rate_limited`, to send again at the given time.
    private var resumesDue: [(channel: String, at: Int64)] = []
    /// Who the last ready connection was signed in as: a new one as the same user resumes it.
    private var lastReadyUsername: String?

    // Bookkeeping of the loop context's sweep.
    var sweepSlot = -1

    public init(configuration: HuddleClientConfiguration, loop: EventLoop) {
        self.configuration = configuration
        self.loop = loop
        if case .token(let token) = configuration.credentials { self.token = token }
    }

    // MARK: Lifecycle

    /// Connects (and keeps reconnecting) until `stop()`. After a stop — requested, refused
    /// credentials, given up — it starts again with what it has: its token if the server did
    /// not refuse it, and its subscriptions from their last positions.
    public func start() {
        guard state == .idle || state == .stopped else { return }
        failedAttempts = 0
        passwordRetried = false
        refusal = nil
        watch()
        openConnection()
    }

    /// Closes the connection and stops reconnecting. Requests waiting or in flight fail with
    /// `closed`; the client keeps its subscriptions' positions for a later `start()`.
    public func stop() {
        guard state != .stopped else { return }
        let connection = self.connection
        self.connection = nil
        connection?.close()
        finish(.requested)
    }

    /// Requests waiting for a connection or for their reply.
    public var pendingRequests: Int { queued.count + inFlight.count }

    /// Writes with a `client_id` not answered yet (the outbox): waiting for a connection or
    /// for their reply.
    public var unansweredWrites: Int { queued.count { $0.isOutboxWrite } + inFlight.count { $0.isOutboxWrite } }

    /// The channels the client resumes on every connection, with the last position delivered.
    public var subscriptions: [(channel: String, position: Position?)] {
        ledger.channelsToResume().map { ($0.channel, $0.since) }
    }

    // MARK: Requests

    /// Sends `op` with `arguments` (the op's fields, protocol.md) and hands `decode` the
    /// reply's `result`. Made while the client is connecting or waiting to reconnect, the
    /// request waits for the connection (within the request timeout). When the connection
    /// drops before the reply, the request fails with `connectionLost`, or with
    /// `resendAfterReconnect` (for requests that are safe to repeat) goes out again on the next one.
    ///
    /// A write that takes a `client_id` (`KeyedWrites`) gets one made here unless `arguments`
    /// has one, and goes in the outbox: it waits for a connection without a timeout and is sent
    /// again, with the same `client_id`, after every drop until it is answered — the server does
    /// it once (a retry's result says `duplicate`). Only `stop()` or giving up fails it (`closed`).
    public func request<Value>(
        _ op: String, _ arguments: [(String, JSONValue)] = [], resendAfterReconnect: Bool = false,
        decode: @escaping (JSONValue) throws(HuddleClientError) -> Value,
        completion: @escaping (Result<Value, HuddleClientError>) -> Void
    ) {
        var arguments = arguments
        let isOutboxWrite = KeyedWrites.ops.contains(op)
        if isOutboxWrite, !arguments.contains(where: { $0.0 == "client_id" }) {
            arguments.append(("client_id", .string(Self.makeClientID())))
        }
        submit(OutgoingRequest(
            op: op, arguments: arguments, deadline: isOutboxWrite ? .max : deadline(),
            onLoss: resendAfterReconnect || isOutboxWrite ? .resend : .fail, isOutboxWrite: isOutboxWrite,
            complete: Self.decoding(decode, then: completion)))
    }

    /// `request` with the raw `result` object.
    public func request(
        _ op: String, _ arguments: [(String, JSONValue)] = [], resendAfterReconnect: Bool = false,
        completion: @escaping (Result<JSONValue, HuddleClientError>) -> Void
    ) {
        request(op, arguments, resendAfterReconnect: resendAfterReconnect, decode: { result throws(HuddleClientError) in result }, completion: completion)
    }

    static func decoding<Value>(
        _ decode: @escaping (JSONValue) throws(HuddleClientError) -> Value,
        then completion: @escaping (Result<Value, HuddleClientError>) -> Void
    ) -> (Result<JSONValue, HuddleClientError>) -> Void {
        { outcome in
            switch outcome {
            case .success(let result):
                do throws(HuddleClientError) {
                    completion(.success(try decode(result)))
                } catch {
                    completion(.failure(error))
                }
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    func deadline() -> Int64 { MonotonicClock.milliseconds() + configuration.requestTimeoutMilliseconds }

    /// Sends `request` now when the connection is ready, else queues it for the next one.
    func submit(_ request: OutgoingRequest) {
        switch state {
        case .stopped:
            request.complete(.failure(.closed))
        case .ready:
            transmit(request)
        case .idle, .connecting, .signingIn, .waiting:
            guard queued.count < configuration.maxQueuedRequests else {
                request.complete(.failure(.overloaded))
                return
            }
            queued.append(request)
            watch()
        }
    }

    /// Puts `request` on the current connection.
    private func transmit(_ request: OutgoingRequest) {
        guard let connection else {
            queued.append(request)
            return
        }
        var request = request
        nextRequestNumber += 1
        request.id = String(nextRequestNumber)
        var fields: [(String, JSONValue)] = [("id", .string(request.id)), ("op", .string(request.op))]
        if let channel = request.subscribeChannel {
            fields.append(("channel", .string(channel)))
            if let since = ledger.position(of: channel) {
                fields.append(("since", .object([("epoch", .string(since.epoch)), ("offset", .integer(since.offset))])))
            }
        }
        fields += request.arguments
        // An outbox write's timeout counts from when it goes out, not from while it waited.
        if request.isOutboxWrite { request.deadline = deadline() }
        var text: [UInt8] = []
        JSONWriter.append(.object(fields), to: &text)
        if !connection.send(text: text) && connection.state == .open {
            // Open but the outbound queue is full: the server is not reading.
            request.complete(.failure(.overloaded))
            return
        }
        // Refused because the connection is closing: the close, which follows, treats it as lost.
        inFlight.append(request)
    }

    // MARK: Subscriptions (used by HuddleClient+Channels)

    /// Tracks `channel` from `since` and sends a subscribe; its reply's publications are
    /// delivered as events before `completion` runs.
    func subscribe(channel: String, since: Position?, completion: @escaping (Result<SubscribeResult, HuddleClientError>) -> Void) {
        guard state != .stopped else {
            completion(.failure(.closed))
            return
        }
        ledger.track(channel, since: since)
        // Safe to repeat: a resent subscribe resumes from what was delivered meanwhile.
        submit(OutgoingRequest(op: "subscribe", arguments: [], subscribeChannel: channel, deadline: deadline(), onLoss: .resend) { [self] outcome in
            switch outcome {
            case .success(let result):
                completion(subscribed(channel, result: result))
            case .failure(let error):
                if ledger.entries[channel]?.confirmed == false { ledger.untrack(channel) }
                completion(.failure(error))
            }
        })
    }

    /// Stops tracking `channel` at once (later publications are not delivered) and unsubscribes.
    func unsubscribe(channel: String, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        ledger.untrack(channel)
        request("unsubscribe", [("channel", .string(channel))], decode: { _ throws(HuddleClientError) in () }) { outcome in
            // Over a lost connection the subscription is gone anyway: the next connection does not resume it.
            if case .failure(.connectionLost) = outcome {
                completion(.success(()))
            } else {
                completion(outcome)
            }
        }
    }

    /// A subscribe reply: delivers the replayed publications, then moves the channel's
    /// position to its latest offset.
    private func subscribed(_ channel: String, result: JSONValue) -> Result<SubscribeResult, HuddleClientError> {
        do throws(HuddleClientError) {
            let epoch = try result.requiredString("epoch")
            let offset = try result.requiredUInt64("offset")
            let recovered = try result.optionalBool("recovered")
            var delivered = 0
            var gap = false
            for object in try result.requiredArray("publications") {
                let publication = try ChannelPublication.decode(object, channel: channel, epoch: epoch)
                switch ledger.offer(channel: channel, epoch: epoch, offset: publication.offset, replayed: true) {
                case .deliver:
                    delivered += 1
                    emit(.publication(publication))
                case .gap:
                    gap = true
                case .duplicate, .untracked:
                    continue
                }
                if gap { break }
            }
            var current: Whereabouts?
            if let object = result["current"], let owner = LocationChannel.user(in: channel) {
                current = try Whereabouts.decode(object, user: owner)
            }
            if gap {
                resync(channel)
            } else {
                ledger.subscribed(channel: channel, epoch: epoch, offset: offset)
                // After what was replayed, as the place it leads to.
                if let current, ledger.isTracked(channel) { emit(.whereabouts(current)) }
            }
            return .success(SubscribeResult(
                channel: channel, epoch: epoch, offset: offset, recovered: recovered, delivered: delivered, current: current))
        } catch {
            return .failure(error)
        }
    }

    /// Resubscribes `channel` from its position: after a reconnect, or a gap noticed in the
    /// live stream. The reply replays what was missed, or says it cannot.
    private func resume(_ channel: String) {
        let request = OutgoingRequest(op: "subscribe", arguments: [], subscribeChannel: channel, deadline: .max, onLoss: .drop) { [self] outcome in
            switch outcome {
            case .success(let result):
                switch subscribed(channel, result: result) {
                case .success(let subscription):
                    if let recovered = subscription.recovered, ledger.isTracked(channel) {
                        emit(.recovered(channel: channel, recovered: recovered))
                    }
                case .failure(let error):
                    ledger.untrack(channel)
                    emit(.subscriptionEnded(channel: channel, error: error))
                }
            case .failure(.server(code: "rate_limited", _, let retryAfter)):
                resumesDue.append((channel, MonotonicClock.milliseconds() + (retryAfter ?? 1000)))
            case .failure(let error):
                guard ledger.isTracked(channel) else { return }
                ledger.untrack(channel)
                emit(.subscriptionEnded(channel: channel, error: error))
            }
        }
        transmit(request)
    }

    private func resync(_ channel: String) {
        guard state == .ready, ledger.isTracked(channel) else { return }
        ledger.beginResync(channel)
        resume(channel)
    }

    // MARK: Sign-in state (used by HuddleClient+Accounts)

    /// A signup, login or auth succeeded: this session is the one to resume.
    func signedIn(_ session: HuddleSession) {
        user = session.user
        if let token = session.token { self.token = token }
        // Signed in on a ready connection: the next one as this user resumes this session.
        if state == .ready { lastReadyUsername = session.user.username }
    }

    /// A logout succeeded: the server closes with 4001 next; the client reconnects anonymously
    /// and forgets the user's subscriptions and credentials.
    func signedOut() {
        signingOut = true
        user = nil
        token = nil
        configuration.credentials = .none
        ledger.untrackAll()
        resumesDue = []
    }

    // MARK: Connecting

    private func watch() {
        if context == nil { context = ClientLoopContext.of(loop) }
        context?.watch(self)
    }

    private func openConnection() {
        var options = configuration.connection
        if !options.subprotocols.contains("huddle.v1") { options.subprotocols.insert("huddle.v1", at: 0) }
        if let token { options.headers.append(("Authorization", "Bearer \(token)")) }
        let connection = WebSocketClientConnection(url: configuration.url, loop: loop, options: options, delegate: ConnectionEvents(self))
        self.connection = connection
        state = .connecting
        refusal = nil
        dropReason = nil
        connection.connect()
    }

    fileprivate func connectionOpened(_ connection: WebSocketClientConnection) {
        guard connection === self.connection else { return }
        lastHeard = MonotonicClock.milliseconds()
        pingOutstanding = false
        if token != nil {
            // The server checks the header's token and answers with `session` or `auth_failed`.
            state = .signingIn
            signInDeadline = lastHeard + configuration.requestTimeoutMilliseconds
        } else if case .password(let login, let password) = configuration.credentials {
            state = .signingIn
            signInDeadline = lastHeard + configuration.requestTimeoutMilliseconds
            logInWithPassword(login: login, password: password)
        } else {
            becomeReady()
        }
    }

    private func logInWithPassword(login: String, password: String) {
        var arguments: [(String, JSONValue)] = [("login", .string(login)), ("password", .string(password))]
        if let device = configuration.device { arguments.append(("device", .string(device))) }
        transmit(OutgoingRequest(op: "login", arguments: arguments, deadline: .max, onLoss: .drop) { [self] outcome in
            guard state == .signingIn else { return }
            switch outcome {
            case .success(let result):
                do throws(HuddleClientError) {
                    signedIn(try HuddleSession.decode(result))
                    becomeReady()
                } catch {
                    drop("invalid login reply: \(error)")
                }
            case .failure(.server(let code, let message, _)) where !Self.isTransient(code):
                finish(.authenticationFailed(code: code, message: message))
            case .failure(let error):
                drop("login failed: \(error)")
            }
        })
    }

    /// Server errors worth another attempt rather than a stop.
    private static func isTransient(_ code: String) -> Bool {
        ["rate_limited", "unavailable", "internal_error", "too_many_attempts", "busy"].contains(code)
    }

    private func becomeReady() {
        state = .ready
        failedAttempts = 0
        passwordRetried = false
        // Resume every subscription first, in a stable order, unless the application's own
        // subscribe for it is waiting (it resumes from the same position); then what waited.
        let waitingSubscribes = Set(queued.compactMap(\.subscribeChannel))
        for (channel, _) in ledger.channelsToResume() where !waitingSubscribes.contains(channel) {
            resume(channel)
        }
        let waiting = queued
        queued = []
        for request in waiting { transmit(request) }
        let resumed = user != nil && user?.username == lastReadyUsername
        lastReadyUsername = user?.username
        emit(.connected(user: user, resumed: resumed))
    }

    /// Ends the current connection at once, for a reason of ours; it reconnects as after a drop.
    private func drop(_ reason: String) {
        guard let connection else { return }
        dropReason = reason
        connection.abort()
    }

    fileprivate func connectionClosed(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String) {
        guard connection === self.connection else { return }
        self.connection = nil
        pingOutstanding = false
        let why = dropReason ?? Self.describe(code: code, reason: reason)
        dropReason = nil
        // Requests that were on the connection: resent, forgotten, or failed (last, once the
        // client's state says what happens next, so a caller that retries at once is queued).
        var lost: [OutgoingRequest] = []
        var resend: [OutgoingRequest] = []
        for request in inFlight {
            switch request.onLoss {
            case .fail: lost.append(request)
            case .resend:
                var request = request
                if request.isOutboxWrite { request.deadline = .max }
                resend.append(request)
            case .drop: break
            }
        }
        inFlight = []
        queued = resend + queued
        ledger.connectionLost()
        resumesDue = []

        if code == WebSocketCloseCode(rawValue: 4001) {
            if signingOut {
                signingOut = false
                scheduleAttempt(after: 0)
            } else if token != nil, case .password = configuration.credentials, !passwordRetried {
                // The token expired or was revoked: the password opens a new session.
                passwordRetried = true
                token = nil
                scheduleAttempt(after: 0)
            } else {
                let (code, message) = refusal ?? ("session_ended", reason.isEmpty ? "the server ended the session (close 4001)" : reason)
                finish(.authenticationFailed(code: code, message: message))
            }
        } else if let status = connection.handshakeStatus, [400, 403, 404, 405, 426].contains(status) {
            finish(.refused(reason: why))
        } else if state != .stopped {
            failedAttempts += 1
            if configuration.reconnect.allows(attempt: failedAttempts) {
                let delay = configuration.reconnect.delay(attempt: failedAttempts, random: Double.random(in: 0..<1))
                scheduleAttempt(after: delay)
                emit(.reconnecting(attempt: failedAttempts, delayMilliseconds: delay, reason: why))
            } else {
                finish(.gaveUp(attempts: failedAttempts - 1, lastReason: why))
            }
        }
        for request in lost { request.complete(.failure(.connectionLost)) }
    }

    private func scheduleAttempt(after delay: Int64) {
        state = .waiting
        retryAt = MonotonicClock.milliseconds() + delay
    }

    private static func describe(code: WebSocketCloseCode?, reason: String) -> String {
        guard let code else { return reason }
        switch code.rawValue {
        case 1001: return "the server is going away" + (reason.isEmpty ? "" : ": \(reason)")
        case 1006: return reason.isEmpty ? "the connection dropped" : reason
        default: return "closed with \(code.rawValue)" + (reason.isEmpty ? "" : ": \(reason)")
        }
    }

    /// Stops for good: every waiting request fails with `closed`.
    private func finish(_ reason: HuddleStopReason) {
        if let connection {
            self.connection = nil
            connection.abort()
        }
        state = .stopped
        context?.unwatch(self)
        resumesDue = []
        ledger.connectionLost()
        if case .authenticationFailed = reason {
            // The subscriptions were the refused user's: a later start() begins without them.
            token = nil
            user = nil
            ledger.untrackAll()
        }
        let abandoned = queued + inFlight.filter { $0.onLoss != .drop }
        queued = []
        inFlight = []
        // The reason first, so the application knows why before its requests fail.
        emit(.stopped(reason))
        for request in abandoned { request.complete(.failure(.closed)) }
    }

    // MARK: Messages

    fileprivate func received(_ event: WebSocketEvent, on connection: WebSocketClientConnection) {
        guard connection === self.connection else { return }
        lastHeard = MonotonicClock.milliseconds()
        pingOutstanding = false
        guard case .text(let bytes) = event, let message = try? JSONParser.parse(bytes, maxDepth: 64) else { return }
        if let id = message["id"]?.stringValue {
            reply(id: id, message)
        } else if let name = message["event"]?.stringValue {
            handleEvent(name, message)
        }
    }

    private func reply(id: String, _ message: JSONValue) {
        // Replies come in request order, so this is nearly always the first.
        guard let index = inFlight.firstIndex(where: { $0.id == id }) else { return }
        let request = inFlight.remove(at: index)
        if message["ok"]?.boolValue == true {
            request.complete(.success(message["result"] ?? .object([])))
        } else {
            let error = message["error"]
            request.complete(.failure(.server(
                code: error?["code"]?.stringValue ?? "unknown", message: error?["message"]?.stringValue ?? "",
                retryAfterMilliseconds: error?["retry_after_ms"]?.int64Value)))
        }
    }

    private func handleEvent(_ name: String, _ message: JSONValue) {
        switch name {
        case "publication":
            guard let channel = message["channel"]?.stringValue, let epoch = message["epoch"]?.stringValue,
                let publication = try? ChannelPublication.decode(message, channel: channel, epoch: epoch)
            else { return }
            switch ledger.offer(channel: channel, epoch: epoch, offset: publication.offset, replayed: false) {
            case .deliver: emit(.publication(publication))
            case .gap: resync(channel)
            case .duplicate, .untracked: break
            }
        case "presence":
            guard let user = message["user"]?.stringValue, let online = message["online"]?.boolValue else { return }
            emit(.presence(user: user, online: online, time: message["time"]?.int64Value ?? 0))
        case "typing":
            guard let channel = message["channel"]?.stringValue, let user = message["user"]?.stringValue else { return }
            emit(.typing(channel: channel, user: user, time: message["time"]?.int64Value ?? 0))
        case "session":
            guard state == .signingIn, let object = message["user"], let user = try? HuddleUser.decode(object) else { return }
            self.user = user
            becomeReady()
        case "auth_failed":
            let error = message["error"]
            refusal = (error?["code"]?.stringValue ?? "auth_failed", error?["message"]?.stringValue ?? "")
        case "memory_changed":
            if let (change, time) = MemoryChange.decode(message) {
                emit(.memory(change, time: time))
            } else {
                emit(.other(name: name, message: message))
            }
        default:
            if let change = FeedEvent(name: name, message) {
                emit(.feed(change))
            } else {
                emit(.other(name: name, message: message))
            }
        }
    }

    private func emit(_ event: HuddleEvent) {
        onEvent?(event)
    }

    // MARK: Deadlines (called by the loop context's sweep)

    func sweep(now: Int64) {
        expireRequests(now: now)
        switch state {
        case .waiting:
            if now >= retryAt { openConnection() }
        case .signingIn:
            if now >= signInDeadline {
                drop("not signed in within \(configuration.requestTimeoutMilliseconds) ms")
            } else {
                checkHeartbeat(now: now)
            }
        case .ready:
            checkHeartbeat(now: now)
            if !resumesDue.isEmpty { resendDueResumes(now: now) }
        case .idle, .connecting, .stopped:
            break
        }
    }

    private func expireRequests(now: Int64) {
        guard queued.contains(where: { $0.deadline <= now }) || inFlight.contains(where: { $0.deadline <= now }) else { return }
        let expired = queued.filter { $0.deadline <= now } + inFlight.filter { $0.deadline <= now }
        queued.removeAll { $0.deadline <= now }
        // A late reply to one of these finds no request and is ignored.
        inFlight.removeAll { $0.deadline <= now }
        for request in expired { request.complete(.failure(.timedOut)) }
    }

    private func checkHeartbeat(now: Int64) {
        let silence = now - lastHeard
        if silence >= configuration.heartbeat.deadAfterMilliseconds {
            drop("no frame from the server for \(silence) ms")
        } else if silence >= configuration.heartbeat.pingAfterMilliseconds && !pingOutstanding {
            pingOutstanding = connection?.ping() ?? false
        }
    }

    private func resendDueResumes(now: Int64) {
        let due = resumesDue.filter { $0.at <= now }
        resumesDue.removeAll { $0.at <= now }
        for (channel, _) in due where ledger.isTracked(channel) { resume(channel) }
    }
}

/// Forwards one connection's delegate calls to its client without keeping the client alive:
/// a connection holds its delegate until it closes, and the client holds the connection.
private final class ConnectionEvents: ClientConnectionDelegate {
    weak var client: HuddleClient?

    init(_ client: HuddleClient) { self.client = client }

    func webSocketDidOpen(_ connection: WebSocketClientConnection, subprotocol: String?, extensions: [String]) {
        client?.connectionOpened(connection)
    }

    func webSocket(_ connection: WebSocketClientConnection, didReceive event: WebSocketEvent) {
        client?.received(event, on: connection)
    }

    func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool) {
        client?.connectionClosed(connection, code: code, reason: reason)
    }
}
