import HuddleIO
import HuddleWebSocket

/// One WebSocket connection with blocking calls, for scripts and tests: it runs its own event
/// loop on its own thread and every method waits for that loop. Thread-safe. For many
/// connections use `WebSocketClientConnection` on a shared loop instead.
public final class BlockingWebSocketClient: Sendable {
    /// How a connection ended (see `ClientConnectionDelegate.webSocketDidClose`).
    public struct CloseResult: Sendable, Equatable, CustomStringConvertible {
        public var code: WebSocketCloseCode?
        public var reason: String
        public var clean: Bool

        public init(code: WebSocketCloseCode?, reason: String, clean: Bool) {
            self.code = code
            self.reason = reason
            self.clean = clean
        }

        public var description: String {
            "\(code.map { "\($0.rawValue)" } ?? "no code") \(clean ? "clean" : "unclean"): \(reason)"
        }
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The connection is closed (or never opened): how it ended.
        case closed(CloseResult)
        case timedOut(String)
        /// The outbound queue is over `maxOutboundBytes`: the server is not reading fast enough.
        case queueFull

        public var description: String {
            switch self {
            case .closed(let result): return "connection closed: \(result)"
            case .timedOut(let what): return "timed out \(what)"
            case .queueFull: return "outbound queue full"
            }
        }
    }

    /// The subprotocol the server chose, nil when none.
    public let subprotocol: String?
    /// The accepted `Sec-WebSocket-Extensions` elements.
    public let extensions: [String]

    private let loop: EventLoop
    private let thread: LoopThread
    private let box: LoopBound<WebSocketClientConnection?>
    private let inbox: ConditionLock<Inbox>

    private init(subprotocol: String?, extensions: [String], loop: EventLoop, thread: LoopThread, box: LoopBound<WebSocketClientConnection?>, inbox: ConditionLock<Inbox>) {
        self.subprotocol = subprotocol
        self.extensions = extensions
        self.loop = loop
        self.thread = thread
        self.box = box
        self.inbox = inbox
    }

    /// Connects and waits for the connection to open. `timeout` bounds TCP, TLS and the upgrade.
    /// - Throws: `Failure.closed` with the reason the connection did not open (its HTTP status
    ///   for a refused upgrade, OpenSSL's for a TLS failure).
    public static func connect(to url: ClientURL, options: ClientConnectionOptions = .init(), timeout: Double = 10) throws -> BlockingWebSocketClient {
        var options = options
        options.connectTimeoutMilliseconds = Int64(timeout * 1000)
        // A small read buffer: one connection does not need the 256 KiB a server loop shares.
        let loop = try EventLoop(index: 0, readBufferSize: 64 * 1024)
        let thread = try LoopThread.spawn(name: "huddle-client") { loop.run() }
        let box = LoopBound<WebSocketClientConnection?>(nil, loop: loop)
        let inbox = ConditionLock(Inbox())
        loop.execute { [options] in
            let connection = WebSocketClientConnection(url: url, loop: loop, options: options, delegate: InboxDelegate(inbox: inbox))
            box.value = connection
            connection.connect()
        }
        // The connection's own deadline ends the attempt; the margin only covers a stuck loop.
        let outcome = inbox.wait(timeout: timeout + 5) { inbox -> Result<(String?, [String]), Failure>? in
            if let opened = inbox.opened { return .success(opened) }
            if let closed = inbox.closed { return .failure(.closed(closed)) }
            return nil
        }
        do {
            guard let outcome else { throw Failure.timedOut("connecting to \(url)") }
            let (subprotocol, extensions) = try outcome.get()
            return BlockingWebSocketClient(
                subprotocol: subprotocol, extensions: extensions, loop: loop, thread: thread, box: box, inbox: inbox)
        } catch {
            loop.execute { box.value?.abort() }
            loop.stop()
            thread.join()
            throw error
        }
    }

    deinit {
        let box = self.box
        loop.execute { box.value?.abort() }
        loop.stop()
        thread.join()
    }

    public func send(text: String) throws { try send(text: Array(text.utf8)) }

    public func send(text: [UInt8]) throws { try perform { $0.send(text: text) } }

    public func send(binary: [UInt8]) throws { try perform { $0.send(binary: binary) } }

    public func ping(_ payload: [UInt8] = []) throws { try perform { $0.ping(payload) } }

    /// The next text or binary message, or pong, in arrival order; messages that arrived before
    /// the connection closed are still delivered.
    /// - Throws: `Failure.closed` once the connection is closed and every message was taken,
    ///   `Failure.timedOut` when nothing arrives within `timeout` seconds.
    public func receive(timeout: Double = 10) throws -> WebSocketEvent {
        let outcome = inbox.wait(timeout: timeout) { inbox -> Result<WebSocketEvent, Failure>? in
            if !inbox.events.isEmpty { return .success(inbox.events.removeFirst()) }
            if let closed = inbox.closed { return .failure(.closed(closed)) }
            return nil
        }
        guard let outcome else { throw Failure.timedOut("waiting for a message") }
        return try outcome.get()
    }

    /// Runs the close handshake and waits for it to end; after `timeout` seconds the connection
    /// is aborted. Returns how it ended (also when it had already ended).
    @discardableResult
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "", timeout: Double = 10) -> CloseResult {
        let box = self.box
        loop.execute { box.value?.close(code: code, reason: reason) }
        if let result = inbox.wait(timeout: timeout, until: { $0.closed }) { return result }
        loop.execute { box.value?.abort() }
        return inbox.wait(timeout: 5, until: { $0.closed })
            ?? CloseResult(code: nil, reason: "the event loop did not answer", clean: false)
    }

    /// How the connection ended, nil while it is open.
    public var closeResult: CloseResult? { inbox.update { $0.closed } }

    /// Runs `operation` on the loop and waits for its verdict.
    private func perform(_ operation: @escaping @Sendable (WebSocketClientConnection) -> Bool) throws {
        let box = self.box
        let verdict = ConditionLock<Bool?>(nil)
        loop.execute {
            let accepted = box.value.map(operation) ?? false
            verdict.update { $0 = accepted }
        }
        guard let accepted = verdict.wait(timeout: 30, until: { $0 }) else {
            throw Failure.timedOut("waiting for the event loop")
        }
        guard !accepted else { return }
        if let closed = closeResult { throw Failure.closed(closed) }
        throw Failure.queueFull
    }
}

/// What the loop thread hands the caller's thread.
private struct Inbox {
    var opened: (subprotocol: String?, extensions: [String])?
    var events: [WebSocketEvent] = []
    var closed: BlockingWebSocketClient.CloseResult?
}

private final class InboxDelegate: ClientConnectionDelegate {
    let inbox: ConditionLock<Inbox>

    init(inbox: ConditionLock<Inbox>) { self.inbox = inbox }

    func webSocketDidOpen(_ connection: WebSocketClientConnection, subprotocol: String?, extensions: [String]) {
        inbox.update { $0.opened = (subprotocol, extensions) }
    }

    func webSocket(_ connection: WebSocketClientConnection, didReceive event: WebSocketEvent) {
        inbox.update { $0.events.append(event) }
    }

    func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool) {
        inbox.update { $0.closed = BlockingWebSocketClient.CloseResult(code: code, reason: reason, clean: clean) }
    }
}
