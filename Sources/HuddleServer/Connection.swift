import CHuddleShims
import Glibc
import HuddleIO
import HuddleWebSocket
import Logging

/// One client connection, owned by one I/O loop: bytes in from the socket (through TLS when
/// on the wss port), the HTTP upgrade, then WebSocket messages to its endpoint; messages out
/// are queued in `outbound` and leave in one write at the end of the loop turn.
///
/// The codec (HTTP parser, frame reader, permessage-deflate) is pure; this class is the I/O
/// half: readiness, partial writes, limits, deadlines and the close handshake.
final class Connection: EventHandler, Flushable {
    enum Phase {
        /// TLS handshake in progress (wss port only).
        case tlsHandshake
        /// Waiting for the HTTP request head.
        case httpHead
        /// Reading a request body (HTTP API), then waiting for its response.
        case httpBody
        /// WebSocket open: messages flow both ways.
        case open
        /// Our close frame or final HTTP response is queued; no more messages are sent and
        /// incoming data messages are dropped. Waits for the peer's close frame (if we started
        /// the close) and for the queue to drain.
        case closing
        /// Our side is shut (FIN sent); input is discarded until the peer's EOF or the deadline.
        case draining
        case closed
    }

    let fd: Int32
    let peer: String
    unowned let context: LoopContext
    private(set) var phase: Phase
    /// Index in the loop's connection list and in the endpoint's list (swap-remove bookkeeping).
    var slot = -1
    var endpointSlot = -1
    /// Whatever per-connection state the endpoint keeps (nil for the raw bench endpoints).
    var endpointState: AnyObject?

    private let tls: TLSStream?
    private var httpParser: HTTPHeadParser?
    private var pendingRequest: PendingHTTPRequest?
    /// A photo upload or download (`PhotoAPI`), from its head to its response.
    private var pendingPhoto: PhotoTransfer?
    /// A photo response is being written. Up to `--max-photo-size` bytes to a phone take longer
    /// than the closing deadline, and the kernel reports a large send buffer writable again
    /// only once a third of it has drained — seconds apart on a slow link. So the deadline is
    /// the idle timeout, counted again from each write that makes progress: only a reader that
    /// stops reading is dropped.
    private var writingPhotoResponse = false
    private var reader: WebSocketMessageReader?
    private var endpoint: (any WebSocketEndpoint)?
    private var deflate: PerMessageDeflateParameters?
    /// Only when the client refused server_no_context_takeover: its own compression context.
    private var privateDeflater: PerMessageDeflater?

    private var outbound: [UInt8] = []
    private var outboundOffset = 0
    /// Where WebSocket frames begin in `outbound` (after a 101 response still queued).
    private var outboundFramesStart = 0
    var isDirty = false
    private var registeredEvents: UInt32 = 0

    /// Deadline of the current phase (handshake, closing, draining), on the loop's clock.
    private var deadline: Int64
    private(set) var lastReceived: Int64
    private var lastPingSent: Int64 = 0
    private var receivedClose = false
    /// Once the queue is flushed, shut our side (close handshake done, failure, or HTTP reply).
    private var shutdownAfterFlush = false

    private static let closingTimeout: Int64 = 2_000
    /// Write-queue capacity kept after a flush; more is released so idle connections stay small.
    private static let retainedOutboundCapacity = 16 * 1024

    init(fd: Int32, peer: String, tls: TLSStream?, context: LoopContext) {
        self.fd = fd
        self.peer = peer
        self.tls = tls
        self.context = context
        let now = context.loop.now
        lastReceived = now
        deadline = now + Int64(context.configuration.handshakeTimeoutMilliseconds)
        if tls != nil {
            phase = .tlsHandshake
        } else {
            phase = .httpHead
            httpParser = HTTPHeadParser(limits: context.headLimits)
        }
    }

    /// Whether this connection can be sent the shared compressed form of a fan-out frame.
    var acceptsSharedDeflatedFrames: Bool {
        guard let deflate else { return false }
        return deflate.serverNoContextTakeover && deflate.serverMaxWindowBits == 15
    }

    var queuedOutputBytes: Int { outbound.count - outboundOffset }

    // MARK: Events

    func handleEvents(_ events: UInt32) {
        if phase == .tlsHandshake {
            continueTLSHandshake()
            return
        }
        if events & (EventLoop.readable | EventLoop.hangup | EventLoop.error) != 0 {
            readAvailable()
        }
        if phase != .closed, events & EventLoop.writable != 0 || tls?.wantsWriteReadiness == true {
            flush()
        }
    }

    private func continueTLSHandshake() {
        guard let tls else { return }
        switch tls.handshake() {
        case .bytes:
            phase = .httpHead
            httpParser = HTTPHeadParser(limits: context.headLimits)
            updateInterest()
            readAvailable()
        case .wouldBlock:
            updateInterest()
        case .endOfStream:
            abort()
        case .failed(let reason):
            context.logger.info("TLS handshake failed", metadata: ["peer": "\(peer)", "reason": "\(reason)"])
            abort()
        }
    }

    private func readAvailable() {
        let buffer = context.loop.readBuffer
        // Plain sockets: a few reads per event is plenty (epoll is level-triggered and will
        // report the rest). TLS must drain until "want read": OpenSSL may hold decrypted bytes
        // that the socket's readiness no longer announces.
        var budget = tls == nil ? 4 : Int.max
        while budget > 0, phase != .closed {
            budget -= 1
            let result = tls?.read(into: buffer) ?? Socket.read(fd, into: buffer)
            switch result {
            case .bytes(let count):
                lastReceived = context.loop.now
                consume(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                if tls == nil && count < buffer.count { return }
            case .wouldBlock:
                updateInterest()
                return
            case .endOfStream:
                abort()
                return
            case .failed(let reason):
                context.logger.debug("connection failed", metadata: ["peer": "\(peer)", "reason": "\(reason)"])
                abort()
                return
            }
        }
    }

    private func consume(_ bytes: UnsafeRawBufferPointer) {
        switch phase {
        case .httpHead:
            consumeHTTP(bytes)
        case .open, .closing:
            guard reader != nil else { return }  // closing after an HTTP reply: input is ignored
            do {
                // While the reader runs, its event handler must not replace `reader` (an
                // overlapping access): state changes made there take effect right after.
                try reader!.read(bytes) { event in self.handle(event) }
            } catch let error as WebSocketError {
                fail(error)
            } catch {
                fail(WebSocketError(.internalError, "unexpected error"))
            }
            if phase != .open && phase != .closing { reader = nil }
        case .httpBody:
            consumeBody(bytes)
        case .tlsHandshake, .draining, .closed:
            break
        }
    }

    // MARK: HTTP

    private func consumeHTTP(_ bytes: UnsafeRawBufferPointer) {
        let parsed: (head: HTTPRequestHead, consumed: Int)?
        do {
            parsed = try httpParser!.parseRequest(bytes)
        } catch {
            context.logger.info("bad HTTP request", metadata: ["peer": "\(peer)", "status": "\(error.status)", "reason": "\(error.reason)"])
            respond(status: error.status, body: error.reason)
            return
        }
        guard let (head, consumed) = parsed else { return }
        httpParser = nil
        if let photos = context.photoAPI, PhotoAPI.serves(head.path) {
            beginPhotoRequest(head, rest: UnsafeRawBufferPointer(rebasing: bytes[consumed...]), photos: photos)
            return
        }
        if head.path.hasPrefix("/api/") {
            beginAPIRequest(head, rest: UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
            return
        }
        route(head)
        if phase == .open, consumed < bytes.count {
            consume(UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
        }
    }

    /// HTTP API requests carry a JSON body (Content-Length only; chunked bodies are refused).
    private func beginAPIRequest(_ head: HTTPRequestHead, rest: UnsafeRawBufferPointer) {
        guard let api = context.httpAPI else {
            respond(status: 404, body: "the HTTP API is disabled (start the server with --api-key)")
            return
        }
        if !head.headers.values("transfer-encoding").isEmpty {
            respond(status: 411, body: "send the body with Content-Length")
            return
        }
        let lengthText = head.headers[first: "content-length"] ?? "0"
        guard let length = Int(lengthText), length >= 0 else {
            respond(status: 400, body: "bad Content-Length")
            return
        }
        guard length <= HTTPAPI.maxBodyBytes else {
            respond(status: 413, body: "body over \(HTTPAPI.maxBodyBytes) bytes")
            return
        }
        pendingRequest = PendingHTTPRequest(head: head, expectedLength: length, api: api)
        phase = .httpBody
        consumeBody(rest)
    }

    private func consumeBody(_ bytes: UnsafeRawBufferPointer) {
        if pendingPhoto != nil { return consumePhotoBody(bytes) }
        guard let request = pendingRequest, !request.dispatched else { return }
        let wanted = request.expectedLength - request.body.count
        request.body.append(contentsOf: bytes.prefix(wanted))
        guard request.body.count == request.expectedLength else { return }
        request.dispatched = true
        request.api.handle(request.head, body: request.body, from: self)
    }

    // MARK: Photos

    /// The photo endpoints answer from the head what they can (method, token, size); anything
    /// else becomes a transfer that reads the body here and answers later.
    private func beginPhotoRequest(_ head: HTTPRequestHead, rest: UnsafeRawBufferPointer, photos: PhotoAPI) {
        switch photos.begin(head, on: self) {
        case .respond(let response):
            respond(status: response.status, headers: response.headers, contentType: response.contentType, body: response.body)
        case .transfer(let transfer):
            pendingPhoto = transfer
            phase = .httpBody
            consumePhotoBody(rest)
        }
    }

    /// The body's deadline is the transfer's own (`PhotoTransfer.bodyDeadline`), fixed when the
    /// head arrived: a client trickling bytes cannot push it back.
    private func consumePhotoBody(_ bytes: UnsafeRawBufferPointer) {
        guard let transfer = pendingPhoto, !bytes.isEmpty else { return }
        transfer.receive(bytes)
    }

    /// The core's answer to this connection's photo request (through the endpoint).
    func photoAccessDecided(_ outcome: PhotoAccessOutcome) {
        pendingPhoto?.decided(outcome)
    }

    /// `100 Continue` (RFC 9110 §10.1.1) for a client that waits for it before sending the
    /// body: the upload is allowed, so the bytes are worth sending.
    func continuePhotoUpload(_ transfer: PhotoTransfer) {
        guard pendingPhoto === transfer, phase == .httpBody else { return }
        enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
    }

    /// Completes the photo request `transfer`; nothing if the connection is no longer serving it.
    func finishPhotoRequest(_ transfer: PhotoTransfer, _ response: PhotoResponse) {
        guard pendingPhoto === transfer, phase == .httpBody else { return }
        pendingPhoto = nil
        respond(status: response.status, headers: response.headers, contentType: response.contentType, body: response.body)
        writingPhotoResponse = true
        deadline = context.loop.now + Int64(context.configuration.idleTimeoutMilliseconds)
    }

    /// Completes an HTTP API request (possibly a loop turn or more after it arrived).
    func respondJSON(status: Int, body: [UInt8]) {
        guard phase == .httpBody else { return }
        pendingRequest = nil
        respond(status: status, contentType: "application/json", body: body)
    }

    /// Answers a plain GET (metrics) with a body built by the server.
    func respondText(status: Int, contentType: String, body: [UInt8]) {
        respond(status: status, contentType: contentType, body: body)
    }

    private func route(_ head: HTTPRequestHead) {
        if head.path == "/healthz" || head.path == "/metrics", !WebSocketHandshake.isUpgradeRequest(head) {
            guard head.method == "GET" || head.method == "HEAD" else {
                respond(status: 405, headers: [("Allow", "GET, HEAD")], body: "method not allowed")
                return
            }
            if head.path == "/metrics" {
                guard context.metricsAccess.allows(head) else {
                    respond(status: 401, headers: [("WWW-Authenticate", "Bearer realm=\"metrics\"")], body: "/metrics needs Authorization: Bearer <metrics token>")
                    return
                }
                let text = context.metrics.prometheusText()
                respond(status: 200, contentType: "text/plain; version=0.0.4", body: head.method == "HEAD" ? [] : Array(text.utf8))
            } else {
                respond(status: 200, body: "ok", omitBody: head.method == "HEAD")
            }
            return
        }
        guard let endpoint = context.endpoint(for: head.path) else {
            context.logger.debug("unknown path", metadata: ["peer": "\(peer)", "path": "\(head.path)"])
            respond(status: 404, body: "no such endpoint: \(head.path)")
            return
        }
        switch WebSocketHandshake.validate(head) {
        case .reject(let status, let headers, let reason):
            context.logger.info("handshake rejected", metadata: ["peer": "\(peer)", "status": "\(status)", "reason": "\(reason)"])
            respond(status: status, headers: headers, body: reason)
        case .upgrade(let request):
            let subprotocol: String?
            switch endpoint.accept(request) {
            case .reject(let status, let reason):
                context.logger.info("upgrade refused", metadata: ["peer": "\(peer)", "status": "\(status)", "reason": "\(reason)"])
                respond(status: status, body: reason)
                return
            case .accept(let chosen):
                subprotocol = chosen
            }
            var extensionHeader: String?
            var inflater: PerMessageInflater?
            if let (parameters, header) = PerMessageDeflateNegotiation.negotiate(
                offers: request.extensionOffers, options: context.deflateOptions)
            {
                deflate = parameters
                extensionHeader = header
                inflater = parameters.clientNoContextTakeover
                    ? context.sharedInflater
                    : PerMessageInflater(windowBits: parameters.clientMaxWindowBits, noContextTakeover: false)
                if !parameters.serverNoContextTakeover {
                    privateDeflater = PerMessageDeflater(windowBits: parameters.serverMaxWindowBits, noContextTakeover: false)
                }
            }
            enqueue(WebSocketHandshake.upgradeResponse(key: request.key, extensionHeader: extensionHeader, subprotocol: subprotocol))
            outboundFramesStart = outbound.count
            reader = WebSocketMessageReader(role: .server, maxMessageSize: endpoint.maxMessageSize, inflater: inflater)
            self.endpoint = endpoint
            phase = .open
            context.metrics.loop(context.loop.index).webSocketsOpened.add(1, ordering: .relaxed)
            endpoint.connectionOpened(self, request: request)
        }
    }

    /// Sends a complete plain-text HTTP response and closes once it is written.
    private func respond(status: Int, headers: [(String, String)] = [], body: String, omitBody: Bool = false) {
        respond(status: status, headers: headers, contentType: "text/plain; charset=utf-8", body: Array((body + "\n").utf8), omitBody: omitBody)
    }

    private func respond(status: Int, headers: [(String, String)] = [], contentType: String, body: [UInt8], omitBody: Bool = false) {
        var allHeaders = headers
        allHeaders.append(("Content-Type", contentType))
        var response = HTTPResponseWriter.response(status: status, headers: allHeaders, body: body, close: true)
        if omitBody { response.removeLast(body.count) }
        httpParser = nil
        enqueue(response)
        phase = .closing
        shutdownAfterFlush = true
        deadline = context.loop.now + Self.closingTimeout
    }

    // MARK: WebSocket

    private func handle(_ event: WebSocketEvent) {
        switch event {
        case .text(let payload):
            if phase == .open {
                context.metrics.loop(context.loop.index).messagesReceived.add(1, ordering: .relaxed)
                endpoint?.received(.text, payload, from: self)
            }
        case .binary(let payload):
            if phase == .open {
                context.metrics.loop(context.loop.index).messagesReceived.add(1, ordering: .relaxed)
                endpoint?.received(.binary, payload, from: self)
            }
        case .ping(let payload):
            if phase == .open { enqueueFrame(.pong, payload) }
        case .pong:
            break  // any input already refreshed lastReceived
        case .close(let code, _):
            receivedClose = true
            if phase == .open {
                // Echo the peer's status code (RFC 6455 §5.5.1), then shut down once it is written.
                let body = code.map { WebSocketFrameWriter.closePayload(code: $0, reason: "") } ?? []
                enqueueFrame(.close, body)
                enterClosing(shutdownAfterFlush: true)
            } else if phase == .closing {
                shutdownAfterFlush = true
                if queuedOutputBytes == 0 { shutDownOurSide() }
            }
        }
    }

    /// Starts the close handshake from our side.
    func close(_ code: WebSocketCloseCode, reason: String) {
        guard phase == .open else { return }
        enqueueFrame(.close, WebSocketFrameWriter.closePayload(code: code, reason: reason))
        enterClosing(shutdownAfterFlush: false)
    }

    /// Fails the connection (RFC 6455 §7.1.7): send the close frame, don't wait for an answer.
    private func fail(_ error: WebSocketError) {
        context.logger.info("closing connection", metadata: ["peer": "\(peer)", "code": "\(error.closeCode.rawValue)", "reason": "\(error.reason)"])
        guard phase == .open || phase == .closing else { return }
        if phase == .open {
            enqueueFrame(.close, WebSocketFrameWriter.closePayload(code: error.closeCode, reason: error.reason))
        }
        enterClosing(shutdownAfterFlush: true)
        reader = nil  // nothing more is parsed (fail is never called from inside the reader)
    }

    private func enterClosing(shutdownAfterFlush: Bool) {
        phase = .closing
        self.shutdownAfterFlush = shutdownAfterFlush
        deadline = context.loop.now + Self.closingTimeout
        detachFromEndpoint()
    }

    /// The WebSocket session is over (closing or gone): the endpoint forgets the connection.
    private func detachFromEndpoint() {
        guard let endpoint else { return }
        endpoint.connectionClosed(self)
        self.endpoint = nil
        context.metrics.loop(context.loop.index).webSocketsClosed.add(1, ordering: .relaxed)
    }

    /// Queues a data message. Compressed when permessage-deflate was agreed and it is worth it.
    func send(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        guard phase == .open, admitOutput() else { return }
        if let deflate, payload.count >= PerMessageDeflater.minimumCompressibleSize {
            let deflater = privateDeflater ?? context.sharedDeflater(windowBits: deflate.serverMaxWindowBits)
            let compressed = payload.withUnsafeBytes { deflater.compress($0) }
            WebSocketFrameWriter.append(opcode: opcode, payload: compressed, rsv1: true, to: &outbound)
        } else {
            WebSocketFrameWriter.append(opcode: opcode, payload: payload, to: &outbound)
        }
        context.metrics.loop(context.loop.index).messagesSent.add(1, ordering: .relaxed)
        context.markDirty(self)
    }

    /// Queues a frame encoded once for many recipients.
    func sendShared(_ frame: SharedFrame) {
        guard phase == .open, admitOutput() else { return }
        if acceptsSharedDeflatedFrames, let deflated = frame.deflated {
            outbound.append(contentsOf: deflated)
        } else {
            outbound.append(contentsOf: frame.plain)
        }
        context.metrics.loop(context.loop.index).messagesSent.add(1, ordering: .relaxed)
        context.markDirty(self)
    }

    /// The backpressure rule: a new message is admitted while the queue holds less than the
    /// limit, so memory per connection stays under the limit plus one message. A reader that
    /// falls further behind is closed with 1008: the queued frames that have not started to
    /// leave are dropped (their memory freed at once) and the close frame follows the frame in
    /// flight, so the reader learns why as soon as it catches up with its socket buffer.
    private func admitOutput() -> Bool {
        guard queuedOutputBytes >= context.configuration.maxOutboundBytes else { return true }
        context.logger.warning("closing slow consumer", metadata: ["peer": "\(peer)", "queued": "\(queuedOutputBytes)"])
        let end = WebSocketFrameWriter.endOfFrame(covering: outboundOffset, in: outbound, from: outboundFramesStart)
        outbound.removeSubrange(end...)
        close(.policyViolation, reason: "slow consumer: outbound queue over \(context.configuration.maxOutboundBytes) bytes")
        return false
    }

    private func enqueueFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        WebSocketFrameWriter.append(opcode: opcode, payload: payload, to: &outbound)
        context.markDirty(self)
    }

    private func enqueue(_ bytes: [UInt8]) {
        outbound.append(contentsOf: bytes)
        context.markDirty(self)
    }

    // MARK: Writing

    /// Writes as much of the queue as the socket takes: called once per loop turn for every
    /// connection that queued something (so many messages leave in one system call), and again
    /// when the socket turns writable.
    func flush() {
        guard phase != .closed, phase != .tlsHandshake else { return }
        while outboundOffset < outbound.count {
            let result = outbound.withUnsafeBytes { bytes -> IOResult in
                let pending = UnsafeRawBufferPointer(rebasing: bytes[outboundOffset...])
                return tls?.write(from: pending) ?? Socket.write(fd, from: pending)
            }
            switch result {
            case .bytes(let count):
                outboundOffset += count
                if writingPhotoResponse { deadline = context.loop.now + Int64(context.configuration.idleTimeoutMilliseconds) }
            case .wouldBlock:
                updateInterest()
                return
            case .endOfStream, .failed:
                abort()
                return
            }
        }
        if outbound.capacity > Self.retainedOutboundCapacity {
            outbound = []
        } else {
            outbound.removeAll(keepingCapacity: true)
        }
        outboundOffset = 0
        outboundFramesStart = 0
        updateInterest()
        if phase == .closing && shutdownAfterFlush { shutDownOurSide() }
    }

    private func shutDownOurSide() {
        tls?.shutdown()
        Socket.shutdownWrite(fd)
        phase = .draining
        outbound = []
        deadline = context.loop.now + Self.closingTimeout
    }

    private func updateInterest() {
        guard phase != .closed else { return }
        var events = EventLoop.readable
        if queuedOutputBytes > 0 || tls?.wantsWriteReadiness == true { events |= EventLoop.writable }
        if events != registeredEvents {
            registeredEvents = events
            context.loop.modify(fd, events: events)
        }
    }

    func registered(events: UInt32) { registeredEvents = events }

    // MARK: Time

    /// Called by the loop's periodic sweep: enforces handshake, idle and closing deadlines and
    /// pings quiet peers.
    func checkDeadlines(now: Int64) {
        let configuration = context.configuration
        switch phase {
        case .tlsHandshake:
            if now >= deadline {
                context.logger.info("TLS handshake timeout", metadata: ["peer": "\(peer)"])
                abort()
            }
        case .httpBody:
            if let transfer = pendingPhoto {
                if now >= transfer.bodyDeadline, transfer.isReceivingBody {
                    context.logger.info("photo body timeout", metadata: ["peer": "\(peer)"])
                    transfer.timedOut()
                }
                break
            }
            // A body that never completes holds the connection: same deadline as the head.
            if now >= deadline, pendingRequest?.dispatched != true {
                context.logger.info("HTTP body timeout", metadata: ["peer": "\(peer)"])
                respond(status: 408, body: "request body timeout")
            }
        case .httpHead:
            if now >= deadline {
                context.logger.info("HTTP handshake timeout", metadata: ["peer": "\(peer)"])
                respond(status: 408, body: "handshake timeout")
            }
        case .open:
            let silence = now - lastReceived
            if silence >= Int64(configuration.idleTimeoutMilliseconds) {
                fail(WebSocketError(.policyViolation, "idle timeout: no data or pong for \(silence / 1000) s"))
            } else if silence >= Int64(configuration.pingIntervalMilliseconds),
                now - lastPingSent >= Int64(configuration.pingIntervalMilliseconds)
            {
                lastPingSent = now
                enqueueFrame(.ping, [])
            }
        case .closing, .draining:
            if now >= deadline { abort() }
        case .closed:
            break
        }
    }

    // MARK: Teardown

    /// Closes the socket now, whatever is queued.
    func abort() {
        guard phase != .closed else { return }
        detachFromEndpoint()
        phase = .closed
        httpParser = nil
        pendingRequest = nil
        pendingPhoto = nil
        outbound = []
        context.loop.unregister(fd)
        Glibc.close(fd)
        context.remove(self)
    }
}

/// An HTTP API request whose body is still arriving, or whose response is still being computed.
final class PendingHTTPRequest {
    let head: HTTPRequestHead
    let expectedLength: Int
    let api: HTTPAPI
    var body: [UInt8] = []
    var dispatched = false

    init(head: HTTPRequestHead, expectedLength: Int, api: HTTPAPI) {
        self.head = head
        self.expectedLength = expectedLength
        self.api = api
    }
}
