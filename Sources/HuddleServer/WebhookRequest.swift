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
    private var fd: Int32 = -1
    private var tls: TLSStream?
    private var candidates: [SocketAddress] = []
    private var lastConnectError = ""
    private var sentBytes = 0
    private var registeredEvents: UInt32 = 0
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
            registeredEvents = EventLoop.writable
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
        guard let tlsContext else {
            state = .sending
            return continueSending()
        }
        do {
            tls = try TLSStream(clientContext: tlsContext, fd: fd, serverName: url.host)
        } catch {
            return finish(.failed("TLS setup failed: \(error)"))
        }
        state = .tlsHandshake
        continueHandshake()
    }

    private func continueHandshake() {
        guard let tls else { return }
        switch tls.handshake() {
        case .bytes:
            state = .sending
            continueSending()
        case .wouldBlock:
            updateInterest()
        case .endOfStream:
            finish(.failed("the webhook closed the connection during the TLS handshake"))
        case .failed(let reason):
            finish(.failed(reason))
        }
    }

    // MARK: Sending and receiving

    private func continueSending() {
        while sentBytes < request.count {
            let result = request[sentBytes...].withUnsafeBytes { bytes in
                tls?.write(from: bytes) ?? Socket.write(fd, from: bytes)
            }
            switch result {
            case .bytes(let count):
                sentBytes += count
            case .wouldBlock:
                return updateInterest()
            case .endOfStream:
                return finish(.failed("the webhook closed the connection before the request was sent"))
            case .failed(let reason):
                return finish(.failed("sending the request: \(reason)"))
            }
        }
        state = .receiving
        updateInterest()
    }

    private func readAvailable() {
        let buffer = loop.readBuffer
        // TLS must drain until "want read": OpenSSL may hold decrypted bytes the socket's
        // readiness no longer announces.
        while state == .receiving {
            let result = tls?.read(into: buffer) ?? Socket.read(fd, into: buffer)
            switch result {
            case .bytes(let count):
                consume(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            case .wouldBlock:
                return updateInterest()
            case .endOfStream:
                return finish(.failed("the webhook closed the connection without a response"))
            case .failed(let reason):
                return finish(.failed("reading the response: \(reason)"))
            }
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

    func handleEvents(_ events: UInt32) {
        switch state {
        case .connecting:
            connectCompleted()
        case .tlsHandshake:
            continueHandshake()
        case .sending:
            continueSending()
        case .receiving:
            readAvailable()
        case .finished:
            break
        }
    }

    private func updateInterest() {
        guard fd >= 0 else { return }
        let events: UInt32
        switch state {
        case .connecting:
            events = EventLoop.writable
        case .tlsHandshake, .sending, .receiving:
            // TLS says which readiness its last call waits for; plain sockets wait to write
            // while sending and to read after.
            if let tls {
                events = tls.wantsWriteReadiness ? EventLoop.writable : EventLoop.readable
            } else {
                events = state == .sending ? EventLoop.writable : EventLoop.readable
            }
        case .finished:
            return
        }
        if events != registeredEvents {
            registeredEvents = events
            loop.modify(fd, events: events)
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
        guard fd >= 0 else { return }
        loop.unregister(fd)
        Glibc.close(fd)
        fd = -1
        tls = nil
        registeredEvents = 0
    }
}
