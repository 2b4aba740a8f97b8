import Glibc
import HuddleIO
import HuddleWebSocket

/// One POST to the push webhook, driven by the gateway's event loop: connect (each resolved
/// address in turn), TLS for https, send the request, read the response's status line — then
/// close. Bounded by one timeout for the whole attempt.
///
/// No keep-alive: notifications are sparse next to chat traffic, and a fresh connection per
/// request never meets a connection the receiver closed while it sat idle (the classic
/// keep-alive failure, which would need a retry of its own). `Connection: close` tells the
/// receiver so; the response body is never read.
final class WebhookRequest: EventHandler {
    enum Outcome: Equatable {
        /// 2xx.
        case accepted(status: Int)
        /// A status a retry would not change: 4xx other than 408 and 429, 3xx.
        case rejected(status: Int)
        /// Worth a retry: no connection, TLS or I/O failure, timeout, 408, 429, 5xx.
        case failed(String)
    }

    private enum State {
        case connecting, tlsHandshake, sending, receiving, finished
    }

    private let loop: EventLoop
    private let url: WebhookURL
    private let tlsContext: TLSClientContext?
    private let request: [UInt8]
    private let timeoutMilliseconds: Int64
    private let completion: (WebhookRequest, Outcome) -> Void

    private var state = State.connecting
    /// The socket being connected; once connected it belongs to `transport`.
    private var fd: Int32 = -1
    private var transport: Transport?
    private var candidates: [SocketAddress] = []
    private var lastConnectError = ""
    private var parser = HTTPHeadParser()
    private var timeoutTimer: Int?

    init(
        url: WebhookURL, tlsContext: TLSClientContext?, request: [UInt8], loop: EventLoop, timeoutMilliseconds: Int64,
        completion: @escaping (WebhookRequest, Outcome) -> Void
    ) {
        self.url = url
        self.tlsContext = tlsContext
        self.request = request
        self.loop = loop
        self.timeoutMilliseconds = timeoutMilliseconds
        self.completion = completion
    }

    /// Begins the attempt; the completion runs later, on the loop, never from inside `start`.
    /// A host name is resolved here, blocking this (the gateway's own) thread for as long as
    /// the resolver takes; an IP literal costs nothing.
    func start() {
        timeoutTimer = loop.schedule(after: timeoutMilliseconds) { [unowned self] in
            timeoutTimer = nil
            finish(.failed("no response within \(timeoutMilliseconds) ms"))
        }
        do {
            candidates = try Socket.resolve(host: url.host, port: url.port)
        } catch {
            return failLater("cannot resolve \(url.host): \(error)")
        }
        tryNextAddress()
    }

    /// Ends the attempt without a completion (the gateway is shutting down).
    func cancel() {
        state = .finished
        cancelTimeout()
        closeSocket()
    }

    // MARK: Connecting

    private func tryNextAddress() {
        do {
            fd = try Socket.connectToFirst(of: &candidates)
        } catch {
            lastConnectError = "\(error)"
            return failLater("cannot connect to \(url.hostHeader): \(lastConnectError)")
        }
        do {
            try loop.register(fd, events: EventLoop.writable, handler: self)
        } catch {
            Glibc.close(fd)
            fd = -1
            failLater("cannot watch the socket: \(error)")
        }
    }

    private func connectCompleted() {
        let error = Socket.connectionError(fd)
        guard error == 0 else {
            lastConnectError = String(cString: strerror(error))
            closeSocket()
            return candidates.isEmpty ? finish(.failed("cannot connect to \(url.hostHeader): \(lastConnectError)")) : tryNextAddress()
        }
        candidates = []
        var tls: TLSStream?
        if let tlsContext {
            do {
                tls = try TLSStream(clientContext: tlsContext, fd: fd, serverName: url.host)
            } catch {
                return finish(.failed("TLS setup failed: \(error)"))
            }
        }
        let transport = Transport(fd: fd, tls: tls, loop: loop, registeredEvents: EventLoop.writable)
        // Nothing is read until the request is out: the response cannot come before.
        transport.wantsInput = false
        transport.enqueue(request)
        self.transport = transport
        fd = -1
        if tls == nil {
            state = .sending
            continueSending()
        } else {
            state = .tlsHandshake
            continueHandshake()
        }
    }

    private func continueHandshake() {
        guard let transport else { return }
        switch transport.handshake() {
        case .done:
            state = .sending
            continueSending()
        case .inProgress:
            break
        case .endOfStream:
            finish(.failed("the webhook closed the connection during the TLS handshake"))
        case .failed(let reason):
            finish(.failed(reason))
        }
    }

    // MARK: Sending and receiving

    private func continueSending() {
        guard let transport else { return }
        switch transport.flush().end {
        case .drained:
            state = .receiving
            transport.wantsInput = true
            transport.updateInterest()
        case .pending:
            break
        case .endOfStream:
            finish(.failed("the webhook closed the connection before the request was sent"))
        case .failed(let reason):
            finish(.failed("sending the request: \(reason)"))
        }
    }

    private func readAvailable() {
        guard let transport else { return }
        switch transport.read({ bytes in
            consume(bytes)
            return state == .receiving
        }) {
        case .caughtUp, .stopped:
            break
        case .endOfStream:
            finish(.failed("the webhook closed the connection without a response"))
        case .failed(let reason):
            finish(.failed("reading the response: \(reason)"))
        }
    }

    /// Feeds the response head parser; an interim 1xx head is skipped (the parser resets after
    /// each head) and the final one decides the outcome.
    private func consume(_ bytes: UnsafeRawBufferPointer) {
        var remaining = bytes
        while state == .receiving, !remaining.isEmpty {
            let parsed: (head: HTTPResponseHead, consumed: Int)?
            do {
                parsed = try parser.parseResponse(remaining)
            } catch {
                return finish(.failed("invalid HTTP response: \(error.reason)"))
            }
            guard let (head, consumed) = parsed else { return }
            remaining = UnsafeRawBufferPointer(rebasing: remaining[consumed...])
            if (100..<200).contains(head.status) { continue }
            finish(Self.outcome(of: head.status))
        }
    }

    static func outcome(of status: Int) -> Outcome {
        switch status {
        case 200..<300: .accepted(status: status)
        case 408, 429, 500..<600: .failed("HTTP \(status)")
        default: .rejected(status: status)
        }
    }

    override func handleEvents(_ events: UInt32) {
        switch state {
        case .connecting:
            connectCompleted()
        case .tlsHandshake:
            continueHandshake()
        case .sending:
            // Whatever the event (a hangup too): the write says what became of it.
            continueSending()
        case .receiving:
            readAvailable()
        case .finished:
            break
        }
    }

    // MARK: Ending

    private func failLater(_ reason: String) {
        loop.schedule(after: 0) { [self] in finish(.failed(reason)) }
    }

    private func finish(_ outcome: Outcome) {
        guard state != .finished else { return }
        state = .finished
        cancelTimeout()
        closeSocket()
        completion(self, outcome)
    }

    private func cancelTimeout() {
        guard let timeoutTimer else { return }
        loop.cancelTimer(timeoutTimer)
        self.timeoutTimer = nil
    }

    /// Closes this attempt's socket; the attempt itself may go on with the next address.
    private func closeSocket() {
        if let transport {
            transport.close()
            self.transport = nil
        }
        guard fd >= 0 else { return }
        loop.unregister(fd)
        Glibc.close(fd)
        fd = -1
    }
}
