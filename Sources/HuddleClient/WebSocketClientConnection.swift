import Glibc
import HuddleIO
import HuddleWebSocket

/// The client end of one WebSocket connection (RFC 6455), driven by an `EventLoop`: resolve,
/// non-blocking TCP connect, TLS for `wss`, the upgrade, then messages both ways and the close
/// handshake. Everything runs on the loop's thread: create the connection anywhere, but call
/// `connect()` and everything after it on that thread (from a loop callback, a delegate call or
/// `loop.execute`).
///
/// Built so one loop thread can drive tens of thousands of connections: no thread or timer per
/// connection (deadlines are swept per loop), reads go through the loop's shared buffer, and an
/// idle open connection holds no buffer — the write queue is released once written, the message
/// reader keeps only partial data, and zlib state is the loop's unless the server keeps context
/// between messages and a compressed message actually arrives.
///
/// Writes are corked: every frame sent during a loop turn leaves in one write at the end of the
/// turn. Frames are masked with a fresh key each. Pings are answered with pongs.
public final class WebSocketClientConnection: EventHandler, Flushable {
    public enum State: Sendable, Equatable {
        /// Created; `connect()` not called yet.
        case idle
        /// Resolving and connecting TCP.
        case connecting
        case tlsHandshake
        /// The upgrade request is out; waiting for the 101.
        case upgrading
        /// Messages flow both ways.
        case open
        /// A close frame went out (ours or our echo of the server's); waiting for the rest of
        /// the close handshake and for the server to close TCP.
        case closing
        case closed
    }

    public let url: ClientURL
    public let loop: EventLoop
    public let options: ClientConnectionOptions
    public internal(set) var state: State = .idle
    /// The status of the server's answer to the upgrade once it arrived: 101, or the refusal
    /// (401, 404, 429, 503…) that a reconnect policy decides on.
    public internal(set) var handshakeStatus: Int?
    /// What permessage-deflate agreed, nil when it is off.
    public internal(set) var compression: PerMessageDeflateParameters?

    var delegate: (any ClientConnectionDelegate)?
    var context: ClientLoopContext?
    /// The socket being connected; once connected it belongs to `transport`.
    private var fd: Int32 = -1
    var transport: Transport?
    /// The addresses not tried yet while connecting (a name may resolve to IPv6 and IPv4).
    private var candidates: [SocketAddress] = []
    private var lastConnectError = ""
    /// Only while upgrading: our key, to check the server's accept value against.
    var handshakeKey: String?
    var responseParser: HTTPHeadParser?
    var reader: WebSocketMessageReader?
    /// True while `reader` runs: delegate calls made from inside it must not replace it.
    private var insideReader = false
    /// Only when the server keeps our compression context between messages.
    var privateDeflater: PerMessageDeflater?

    private var closeSent = false
    private var closeReceived = false
    /// Once the queue is written, shut our side (after failing the connection).
    private var shutdownAfterFlush = false
    /// How the connection ends, decided when it becomes known (a close frame, a failure) and
    /// reported when the socket is finally closed.
    private var outcome: (code: WebSocketCloseCode?, reason: String, clean: Bool)?

    // Bookkeeping of the loop context (public only because `Flushable` is: loop use only).
    public var isDirty = false
    var timedSlot = -1
    private(set) var deadline: Int64 = .max

    public init(url: ClientURL, loop: EventLoop, options: ClientConnectionOptions = .init(), delegate: some ClientConnectionDelegate) {
        self.url = url
        self.loop = loop
        self.options = options
        self.delegate = delegate
    }

    /// Bytes queued and not yet written to the socket.
    public var queuedByteCount: Int { transport?.queuedByteCount ?? 0 }

    // MARK: Public operations (loop thread)

    /// Starts connecting. The outcome arrives through the delegate: `webSocketDidOpen`, or
    /// `webSocketDidClose` with a nil code. Calling it again does nothing.
    public func connect() {
        guard state == .idle else { return }
        let context = ClientLoopContext.of(loop)
        self.context = context
        state = .connecting
        setDeadline(after: options.connectTimeoutMilliseconds)
        do {
            candidates = try Socket.resolve(host: url.host, port: url.port)
        } catch {
            failLater("cannot resolve \(url.host): \(error)")
            return
        }
        tryNextAddress()
    }

    /// Queues a text message; `text` must be UTF-8 (it is not checked here, the server will).
    /// Returns false when the connection is not open or the outbound queue is full.
    @discardableResult
    public func send(text: [UInt8]) -> Bool { send(.text, text) }

    @discardableResult
    public func send(text: String) -> Bool { send(.text, Array(text.utf8)) }

    @discardableResult
    public func send(binary: [UInt8]) -> Bool { send(.binary, binary) }

    /// Sends a ping (at most 125 bytes of payload); the pong arrives as `.pong`.
    @discardableResult
    public func ping(_ payload: [UInt8] = []) -> Bool {
        guard state == .open, payload.count <= 125 else { return false }
        enqueueFrame(.ping, payload)
        return true
    }

    /// Starts the close handshake: our close frame goes out, then we wait (at most
    /// `closeTimeoutMilliseconds`) for the server's close frame and its TCP close. Before the
    /// connection opened, this abandons the attempt. A second call does nothing.
    ///
    /// A code that may not appear on the wire (1004–1006, 1015, anything outside 1000–1014 and
    /// 3000–4999) goes as a close frame without a body, which means "no status" (RFC 6455
    /// §7.1.5), rather than as one the server must reject.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        switch state {
        case .idle, .connecting, .tlsHandshake, .upgrading:
            finish(code: nil, reason: "closed by the client before the connection opened", clean: false)
        case .open:
            enqueueFrame(.close, code.isValidOnWire ? WebSocketFrameWriter.closePayload(code: code, reason: reason) : [])
            closeSent = true
            state = .closing
            setDeadline(after: options.closeTimeoutMilliseconds)
        case .closing, .closed:
            break
        }
    }

    /// Closes the socket now, without a close handshake.
    public func abort() {
        switch state {
        case .closed:
            break
        case .open, .closing:
            finish(code: .abnormalClosure, reason: "aborted by the client", clean: false)
        case .idle, .connecting, .tlsHandshake, .upgrading:
            finish(code: nil, reason: "aborted by the client", clean: false)
        }
    }

    // MARK: Connecting

    private func tryNextAddress() {
        do {
            // Even a connect that completed at once is handled when the loop reports the
            // socket writable, next turn: connect() itself never calls the delegate.
            fd = try Socket.connectToFirst(of: &candidates, from: options.sourceAddresses?.next())
        } catch {
            lastConnectError = "\(error)"
            return failLater("cannot connect to \(url.host):\(url.port): \(lastConnectError)")
        }
        do {
            try loop.register(fd, events: EventLoop.writable, handler: self)
        } catch {
            Glibc.close(fd)
            fd = -1
            failLater("cannot watch the socket: \(error)")
        }
    }

    private func tcpConnectCompleted() {
        let error = Socket.connectionError(fd)
        guard error == 0 else {
            lastConnectError = String(cString: strerror(error))
            loop.unregister(fd)
            Glibc.close(fd)
            fd = -1
            if candidates.isEmpty {
                finish(code: nil, reason: "cannot connect to \(url.host):\(url.port): \(lastConnectError)", clean: false)
            } else {
                tryNextAddress()
            }
            return
        }
        candidates = []
        var tls: TLSStream?
        if url.isSecure {
            do {
                let tlsContext = try context!.tlsContext(for: options.tls)
                tls = try TLSStream(clientContext: tlsContext, fd: fd, serverName: url.host)
            } catch {
                finish(code: nil, reason: "TLS setup failed: \(error)", clean: false)
                return
            }
        }
        transport = Transport(fd: fd, tls: tls, loop: loop, registeredEvents: EventLoop.writable)
        fd = -1
        guard tls != nil else {
            beginUpgrade()
            return
        }
        state = .tlsHandshake
        continueTLSHandshake()
    }

    private func continueTLSHandshake() {
        guard let transport else { return }
        switch transport.handshake() {
        case .done:
            beginUpgrade()
        case .inProgress:
            break
        case .endOfStream:
            finish(code: nil, reason: "the server closed the connection during the TLS handshake", clean: false)
        case .failed(let reason):
            finish(code: nil, reason: reason, clean: false)
        }
    }

    // MARK: Events

    override public func handleEvents(_ events: UInt32) {
        switch state {
        case .connecting:
            if events & (EventLoop.writable | EventLoop.error | EventLoop.hangup) != 0 { tcpConnectCompleted() }
        case .tlsHandshake:
            continueTLSHandshake()
        case .upgrading, .open, .closing:
            guard let retries = transport?.retries(for: events) else { return }
            if retries.read { readAvailable() }
            if state != .closed, retries.write { flush() }
        case .idle, .closed:
            break
        }
    }

    private func readAvailable() {
        guard let transport else { return }
        let end = transport.read { bytes in
            consume(bytes)
            return state == .upgrading || state == .open || state == .closing
        }
        switch end {
        case .caughtUp, .stopped:
            break
        case .endOfStream:
            serverClosedTCP()
        case .failed(let reason):
            connectionBroken(reason)
        }
    }

    private func consume(_ bytes: UnsafeRawBufferPointer) {
        switch state {
        case .upgrading:
            consumeHandshake(bytes)
        case .open, .closing:
            consumeFrames(bytes)
        case .idle, .connecting, .tlsHandshake, .closed:
            break
        }
    }

    // MARK: Frames in

    func consumeFrames(_ bytes: UnsafeRawBufferPointer) {
        guard reader != nil else { return }  // failed: input is discarded until the server's EOF
        insideReader = true
        do {
            try reader!.read(bytes) { event in self.handle(event) }
            insideReader = false
        } catch let error as WebSocketError {
            insideReader = false
            fail(error)
        } catch {
            insideReader = false
            fail(WebSocketError(.internalError, "unexpected error: \(error)"))
        }
        if state == .closed { reader = nil }
    }

    private func handle(_ event: WebSocketEvent) {
        switch event {
        case .text, .binary, .pong:
            if state == .open || state == .closing { delegate?.webSocket(self, didReceive: event) }
        case .ping(let payload):
            if state == .open { enqueueFrame(.pong, payload) }
        case .close(let code, let reason):
            closeReceived = true
            // RFC 6455 §7.1.5: the connection's close code is the one in the first close frame
            // received; 1005 stands for a frame without one.
            outcome = (code ?? .noStatusReceived, reason, true)
            if state == .open {
                // The server started the close: echo its code (§5.5.1), then, as a client, let
                // the server close TCP first (§7.1.1) and wait for its EOF.
                enqueueFrame(.close, code.map { WebSocketFrameWriter.closePayload(code: $0, reason: "") } ?? [])
                closeSent = true
                state = .closing
                setDeadline(after: options.closeTimeoutMilliseconds)
            }
        }
    }

    /// Fails the connection (RFC 6455 §7.1.7): our close frame with the error's code, then our
    /// side shut once it is written; the server's EOF (or the deadline) ends it.
    private func fail(_ error: WebSocketError) {
        guard state == .open || state == .closing else { return }
        if !closeSent {
            enqueueFrame(.close, WebSocketFrameWriter.closePayload(code: error.closeCode, reason: error.reason))
            closeSent = true
        }
        outcome = (error.closeCode, error.reason, false)
        reader = nil
        state = .closing
        shutdownAfterFlush = true
        setDeadline(after: options.closeTimeoutMilliseconds)
    }

    private func serverClosedTCP() {
        switch state {
        case .upgrading:
            finish(code: nil, reason: "the server closed the connection during the upgrade", clean: false)
        default:
            if closeSent && queuedByteCount > 0 { flush() }  // our echo may still fit: the server only shut its side
            finish(code: .abnormalClosure, reason: "the server closed the connection without a close frame", clean: false)
        }
    }

    private func connectionBroken(_ reason: String) {
        switch state {
        case .upgrading, .tlsHandshake, .connecting:
            finish(code: nil, reason: reason, clean: false)
        default:
            finish(code: .abnormalClosure, reason: reason, clean: false)
        }
    }

    // MARK: Writing

    /// Writes as much of the queue as the socket takes: once per loop turn for every connection
    /// that queued something, and again when the socket turns writable.
    public func flush() {
        guard state == .upgrading || state == .open || state == .closing, let transport else { return }
        switch transport.flush().end {
        case .pending:
            return
        case .endOfStream:
            connectionBroken("the server closed the connection")
            return
        case .failed(let reason):
            connectionBroken(reason)
            return
        case .drained:
            break
        }
        if state == .closing && shutdownAfterFlush {
            shutdownAfterFlush = false
            transport.shutdownOutput()
        }
    }

    // MARK: Deadlines

    private func setDeadline(after milliseconds: Int64) {
        deadline = MonotonicClock.milliseconds() + milliseconds
        context?.track(self)
    }

    /// The loop context's sweep found the loop itself held up for `milliseconds`.
    func postponeDeadline(by milliseconds: Int64) {
        if deadline != .max { deadline += milliseconds }
    }

    func clearDeadline() {
        deadline = .max
        context?.untrack(self)
    }

    /// Called by the loop context's sweep once `deadline` has passed.
    func deadlinePassed() {
        switch state {
        case .connecting, .tlsHandshake, .upgrading:
            finish(code: nil, reason: "no open connection within \(options.connectTimeoutMilliseconds) ms (\(state))", clean: false)
        case .closing:
            finish(code: .abnormalClosure, reason: "the close handshake did not finish within \(options.closeTimeoutMilliseconds) ms", clean: false)
        case .idle, .open, .closed:
            clearDeadline()
        }
    }

    // MARK: The end

    /// Reports a failure found while the caller is still inside `connect()` at the end of the turn.
    private func failLater(_ reason: String) {
        context?.runAtTurnEnd { [self] in
            finish(code: nil, reason: reason, clean: false)
        }
    }

    /// The one way out: closes the socket, drops every buffer and reports the outcome decided
    /// earlier (a close frame, a failure) or else the one given here.
    func finish(code: WebSocketCloseCode?, reason: String, clean: Bool) {
        guard state != .closed else { return }
        let (code, reason, clean) = outcome ?? (code, reason, clean)
        state = .closed
        clearDeadline()
        if fd >= 0 {
            loop.unregister(fd)
            Glibc.close(fd)
            fd = -1
        }
        transport?.close(notifyingPeer: true)
        transport = nil
        candidates = []
        responseParser = nil
        handshakeKey = nil
        privateDeflater = nil
        if !insideReader { reader = nil }
        let delegate = self.delegate
        self.delegate = nil
        delegate?.webSocketDidClose(self, code: code, reason: reason, clean: clean)
    }
}
