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
/// Confined to its run loop (`ClientRunLoop`): create it anywhere, but call `start()` and
/// everything else on the loop's thread; every callback runs there. It holds no
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

    public let runLoop: ClientRunLoop
    public private(set) var configuration: HuddleClientConfiguration
    /// Events for the application, on the loop thread, in order.
    public var onEvent: ((HuddleEvent) -> Void)?
    public internal(set) var state: State = .idle
    /// Who the client is signed in as; nil while anonymous.
    public internal(set) var user: HuddleUser?
    /// The session token presented on every (re)connection; nil while anonymous.
    public private(set) var token: String?
    /// Which of `configuration.urls` the client is connected to, connecting to, or will try next.
    public private(set) var urlIndex = 0
    /// The URL the client is connected to, connecting to, or will try next.
    public var currentURL: ClientURL { configuration.urls[urlIndex] }

    var connection: WebSocketClientConnection?
    var context: ClientLoopContext?
    var ledger = SubscriptionLedger()
    /// Requests waiting for a ready connection, in call order.
    var queued: [OutgoingRequest] = []
    /// Requests sent on the current connection, in send order (the order of their replies).
    var inFlight: [OutgoingRequest] = []
    var nextRequestNumber: UInt64 = 0
    /// Attempts since the last ready connection that ended before becoming ready.
    var failedAttempts = 0
    var retryAt: Int64 = 0
    var signInDeadline: Int64 = 0
    /// When the last frame from the server arrived.
    var lastHeard: Int64 = 0
    var pingOutstanding = false
    /// Why the connection is being dropped by us, for the reconnecting event.
    var dropReason: String?
    /// The refusal the server explained before closing with 4001 (`auth_failed`).
    var refusal: (code: String, message: String)?
    /// A logout succeeded: the 4001 that follows is expected, not a refusal.
    var signingOut = false
    /// A refused token has been replaced by a password login once since the last ready connection.
    var passwordRetried = false
    /// Resubscribes refused with `rate_limited`, to send again at the given time.
    var resumesDue: [(channel: String, at: Int64)] = []
    /// Who the last ready connection was signed in as: a new one as the same user resumes it.
    var lastReadyUsername: String?

    // Bookkeeping of the loop context's sweep.
    var sweepSlot = -1

    var loop: EventLoop { runLoop.eventLoop }

    public init(configuration: HuddleClientConfiguration, runLoop: ClientRunLoop) {
        self.configuration = configuration
        self.runLoop = runLoop
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

    /// Sends `operation` and hands `decode` the reply's `result`. Made while the client is
    /// connecting or waiting to reconnect, the request waits for the connection (within the
    /// request timeout). When the connection drops before the reply, the request fails with
    /// `connectionLost`, or with `resendAfterReconnect` (for requests that are safe to repeat)
    /// goes out again on the next one.
    ///
    /// A write that takes a `client_id` (`KeyedWrites`) gets one made here unless `clientID`
    /// is given, and goes in the outbox: it waits for a connection without a timeout and is sent
    /// again, with the same `client_id`, after every drop until it is answered — the server does
    /// it once (a retry's result says `duplicate`). Only `stop()` or giving up fails it (`closed`).
    func request<Value>(
        _ operation: Operation, clientID: String? = nil, resendAfterReconnect: Bool = false,
        decode: @escaping (JSONValue) throws(HuddleClientError) -> Value,
        completion: @escaping (Result<Value, HuddleClientError>) -> Void
    ) {
        let isOutboxWrite = operation.isKeyedWrite
        submit(OutgoingRequest(
            operation, clientID: isOutboxWrite ? clientID ?? Self.makeClientID() : nil, deadline: isOutboxWrite ? .max : deadline(),
            onLoss: resendAfterReconnect || isOutboxWrite ? .resend : .fail, isOutboxWrite: isOutboxWrite,
            complete: Self.decoding(decode, then: completion)))
    }

    /// `request` with a reader of the wire model (HuddleProtocol): a result that does not
    /// have the shape the op gives it is `invalidReply`.
    func request<Value>(
        _ operation: Operation, clientID: String? = nil, resendAfterReconnect: Bool = false,
        reading read: @escaping (JSONValue) throws(WireFormatError) -> Value,
        completion: @escaping (Result<Value, HuddleClientError>) -> Void
    ) {
        request(operation, clientID: clientID, resendAfterReconnect: resendAfterReconnect, decode: { result throws(HuddleClientError) in
            do throws(WireFormatError) {
                return try read(result)
            } catch {
                throw .invalidReply(error.reason)
            }
        }, completion: completion)
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
    func transmit(_ request: OutgoingRequest) {
        guard let connection else {
            queued.append(request)
            return
        }
        var request = request
        nextRequestNumber += 1
        request.id = String(nextRequestNumber)
        var operation = request.operation
        if let channel = request.subscribeChannel { operation = .subscribe(channel: channel, since: ledger.position(of: channel)) }
        // An outbox write's timeout counts from when it goes out, not from while it waited.
        if request.isOutboxWrite { request.deadline = deadline() }
        let text = RequestEncoder.encode(ClientRequest(id: request.id, operation: operation, clientID: request.clientID), omittingDefaults: true)
        if !connection.send(text: text) && connection.state == .open {
            // Open but the outbound queue is full: the server is not reading.
            request.complete(.failure(.overloaded))
            return
        }
        // Refused because the connection is closing: the close, which follows, treats it as lost.
        inFlight.append(request)
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

    func openConnection() {
        var options = configuration.connection
        if !options.subprotocols.contains("huddle.v1") { options.subprotocols.insert("huddle.v1", at: 0) }
        if let token { options.headers.append(("Authorization", "Bearer \(token)")) }
        let connection = WebSocketClientConnection(url: currentURL, loop: loop, options: options, delegate: ConnectionEvents(self))
        self.connection = connection
        state = .connecting
        refusal = nil
        dropReason = nil
        connection.connect()
    }

    func connectionOpened(_ connection: WebSocketClientConnection) {
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
        transmit(OutgoingRequest(.login(login: login, password: password, device: configuration.device), deadline: .max, onLoss: .drop) { [self] outcome in
            guard state == .signingIn else { return }
            switch outcome {
            case .success(let result):
                do throws(WireFormatError) {
                    signedIn(try AccountSession(result: result))
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

    func becomeReady() {
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
    func drop(_ reason: String) {
        guard let connection else { return }
        dropReason = reason
        connection.abort()
    }

    func connectionClosed(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String) {
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
                // The node may be down for good (cluster mode): the next attempt is on the next URL.
                urlIndex = (urlIndex + 1) % configuration.urls.count
                let delay = configuration.reconnect.delay(attempt: failedAttempts, servers: configuration.urls.count, random: Double.random(in: 0..<1))
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
    func finish(_ reason: HuddleStopReason) {
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
}
