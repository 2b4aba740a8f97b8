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
    /// Closed as a slow consumer: the close frame waits behind what the kernel already holds
    /// (megabytes on a fast link), so the closing deadline is the slow-reader timeout, counted
    /// again from each write that makes progress — a reader that reads again gets the 1008 and
    /// its reason, one that stopped is dropped. Only the frame in flight and the close frame
    /// are left queued: memory is small.
    private var closingAfterSlowConsumer = false
    private var reader: WebSocketMessageReader?
    private var endpoint: (any WebSocketEndpoint)?
    private var deflate: PerMessageDeflateParameters?
    /// Only when the client refused server_no_context_takeover: its own compression context.
    private var privateDeflater: PerMessageDeflater?

    private var outbound: [UInt8] = []
    private var outboundOffset = 0
    /// Bytes written to the socket so far: with `queuedOutputBytes`, where the queue's end is
    /// in the stream, so the slow-reader check can tell whether bytes queued long ago have left.
    private var writtenBytes = 0
    /// The queue's end (in `writtenBytes` terms) when the sweep found bytes waiting, and when:
    /// those bytes must be written by `since` + the slow-reader timeout.
    private var drainMark: (end: Int, since: Int64)?
    /// When a write last made progress: a reader whose socket takes nothing holds no publisher.
    private var lastWriteProgress: Int64
    /// Over the backpressure threshold and still draining: publishers to it wait (`BackpressureRule`).
    private(set) var isBehind = false
    /// Its socket took nothing for the stall time: not behind (holds nobody) until a write
    /// makes progress again.
    private var isStalled = false
    /// The queue size last added to the loop's queued-bytes gauge.
    private var reportedQueuedBytes = 0
    /// A `/broadcast` publisher whose socket is not read while a subscriber is behind.
    private var readingHeld = false
    /// Where WebSocket frames begin in `outbound` (after a 101 response still queued).
    private var outboundFramesStart = 0
    var isDirty = false
    private var registeredEvents: UInt32 = 0
    /// Shutdown: no more bytes are read while the WebSocket is open, so no new request starts;
    /// what is unread stays in the kernel and was never seen (protocol.md, close code 1001).
    private var readingStopped = false

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
        lastWriteProgress = now
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
        if events & (EventLoop.hangup | EventLoop.error) != 0 {
            // Reported whatever the interest, and again and again (level-triggered) until handled.
            if readingStopped && phase == .open {
                // Shutdown keeps this WebSocket from starting new requests; the peer is gone,
                // and whatever is still queued for it can never arrive.
                abort()
            } else {
                // A held publisher's socket is read to its end.
                readingHeld = false
                readAvailable()
            }
        } else if events & EventLoop.readable != 0, readsInput {
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
        while budget > 0, phase != .closed, !readingHeld {
            budget -= 1
            let result = tls?.read(into: buffer) ?? Socket.read(fd, into: buffer)
            switch result {
            case .bytes(let count):
                lastReceived = context.loop.now
                consume(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                if readingHeld { updateInterest() }
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
        if let staticFiles = context.staticFiles, StaticFiles.claims(head.path), !WebSocketHandshake.isUpgradeRequest(head) {
            switch staticFiles.respond(to: head) {
            case .file(let status, let headers, let contentType, let body, let omitBody)?:
                respond(status: status, headers: headers, contentType: contentType, body: body, omitBody: omitBody)
            case .methodNotAllowed?:
                respond(status: 405, headers: [("Allow", "GET, HEAD")], body: "method not allowed")
            case nil:
                respond(status: 404, body: "no such file: \(head.path)")
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
        // A held publisher reads again: the peer's close frame is what the close waits for.
        if readingHeld {
            readingHeld = false
            updateInterest()
        }
        self.shutdownAfterFlush = shutdownAfterFlush
        deadline = context.loop.now + Self.closingTimeout
        detachFromEndpoint()
    }

    /// The WebSocket session is over (closing or gone): the endpoint forgets the connection.
    private func detachFromEndpoint() {
        guard let endpoint else { return }
        endpoint.connectionClosed(self)
        self.endpoint = nil
        if isBehind {
            isBehind = false
            context.metrics.loop(context.loop.index).readersBehind.subtract(1, ordering: .relaxed)
        }
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
        if !isBehind, !isStalled, queuedOutputBytes > context.backpressure.behindBytes { setBehind(true) }
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
        if !isBehind, !isStalled, queuedOutputBytes > context.backpressure.behindBytes { setBehind(true) }
        context.markDirty(self)
    }

    /// The memory bound (`BackpressureRule`): a new message is admitted while the queue holds
    /// less than the ceiling, so memory per connection stays under it plus one message.
    private func admitOutput() -> Bool {
        guard queuedOutputBytes >= context.configuration.maxOutboundBytes else { return true }
        closeSlowConsumer(.queueLimit, reason: "outbound queue over \(context.configuration.maxOutboundBytes) bytes")
        return false
    }

    /// Closes a reader that fell too far behind with 1008: the queued frames that have not
    /// started to leave are dropped (their memory freed at once) and the close frame follows
    /// the frame in flight, so the reader learns why as soon as it catches up with its socket.
    private func closeSlowConsumer(_ cause: SlowConsumerCause, reason: String) {
        context.logger.warning("closing slow consumer", metadata: ["peer": "\(peer)", "queued": "\(queuedOutputBytes)", "reason": "\(reason)"])
        context.metrics.loop(context.loop.index).countSlowConsumerClose(cause)
        let end = WebSocketFrameWriter.endOfFrame(covering: outboundOffset, in: outbound, from: outboundFramesStart)
        outbound.removeSubrange(end...)
        close(.policyViolation, reason: "slow consumer: \(reason)")
        closingAfterSlowConsumer = true
        deadline = context.loop.now + slowConsumerClosingTimeout
    }

    private var slowConsumerClosingTimeout: Int64 {
        max(Self.closingTimeout, Int64(context.configuration.slowReaderTimeoutMilliseconds))
    }

    /// Tells the endpoint (which holds publishers back) when this reader falls behind or catches up.
    private func setBehind(_ behind: Bool) {
        guard behind != isBehind, phase == .open, let endpoint else { return }
        isBehind = behind
        context.metrics.loop(context.loop.index).readersBehind.add(behind ? 1 : -1, ordering: .relaxed)
        endpoint.connectionBehindChanged(self)
    }

    /// Stops reading this connection's socket until `resumeReading` (TCP backpressure on a
    /// `/broadcast` publisher while a subscriber is behind).
    func holdReading() {
        guard phase == .open, !readingHeld else { return }
        readingHeld = true
        context.metrics.loop(context.loop.index).publishersHeld.add(1, ordering: .relaxed)
        updateInterest()
    }

    func resumeReading() {
        guard readingHeld else { return }
        readingHeld = false
        guard phase != .closed else { return }
        updateInterest()
        // TLS may hold decrypted bytes the socket's readiness will not announce again.
        readAvailable()
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
                writtenBytes += count
                lastWriteProgress = context.loop.now
                isStalled = false
                if writingPhotoResponse { deadline = context.loop.now + Int64(context.configuration.idleTimeoutMilliseconds) }
                if closingAfterSlowConsumer { deadline = context.loop.now + slowConsumerClosingTimeout }
            case .wouldBlock:
                updateInterest()
                wroteSome()
                return
            case .endOfStream, .failed:
                abort()
                return
            }
        }
        wroteSome()
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

    /// After a flush: the queued-bytes gauge follows the queue, and a reader back under the
    /// threshold no longer holds publishers.
    private func wroteSome() {
        let queued = queuedOutputBytes
        if isBehind, queued <= context.backpressure.caughtUpBytes {
            setBehind(false)
        } else if !isBehind, !isStalled, queued > context.backpressure.behindBytes {
            setBehind(true)
        }
        reportQueuedBytes()
    }

    /// Brings the loop's queued-bytes gauge to this queue's size: once per flush, not per message.
    private func reportQueuedBytes() {
        let queued = queuedOutputBytes
        guard queued != reportedQueuedBytes else { return }
        context.metrics.loop(context.loop.index).outboundQueuedBytes.add(queued - reportedQueuedBytes, ordering: .relaxed)
        reportedQueuedBytes = queued
    }

    private func shutDownOurSide() {
        tls?.shutdown()
        Socket.shutdownWrite(fd)
        phase = .draining
        outbound = []
        outboundOffset = 0
        reportQueuedBytes()
        deadline = context.loop.now + Self.closingTimeout
    }

    /// Whether the socket is read: always, but while shutdown keeps an open WebSocket from
    /// starting new requests. Closing reads again (for the peer's close frame: data messages
    /// are dropped there).
    /// A publisher held back (its readers are behind) is not read either.
    private var readsInput: Bool { !readingHeld && !(readingStopped && phase == .open) }

    /// Shutdown: stop reading this open WebSocket; the requests already read are still answered.
    func stopReading() {
        guard phase == .open, !readingStopped else { return }
        readingStopped = true
        updateInterest()
    }

    /// Requests read on this connection and not answered yet (a reply queued counts as answered).
    var requestsUnanswered: Int { endpoint?.requestsUnanswered(self) ?? 0 }

    /// An HTTP request whose whole body was read and whose response is being made.
    var awaitsResponse: Bool {
        guard phase == .httpBody else { return false }
        if let pendingPhoto { return !pendingPhoto.isReceivingBody }
        return pendingRequest?.dispatched == true
    }

    private func updateInterest() {
        guard phase != .closed else { return }
        var events = readsInput ? EventLoop.readable : 0
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
            } else if checkDrain(now: now) {
                break
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

    /// The slow-reader rule (`BackpressureRule`): bytes queued must leave within the timeout,
    /// however much is queued; and a reader whose socket takes nothing for the stall time no
    /// longer holds publishers back. True when the connection was closed.
    private func checkDrain(now: Int64) -> Bool {
        if let mark = drainMark, writtenBytes >= mark.end { drainMark = nil }
        guard queuedOutputBytes > 0 else { return false }
        guard let mark = drainMark else {
            drainMark = (writtenBytes + queuedOutputBytes, now)
            return false
        }
        let waited = now - mark.since
        if waited >= Int64(context.configuration.slowReaderTimeoutMilliseconds) {
            closeSlowConsumer(.queueAge, reason: "bytes queued for \(waited / 1000) s were not read")
            return true
        }
        if isBehind, now - lastWriteProgress >= context.backpressure.stallMilliseconds {
            isStalled = true
            setBehind(false)
        }
        return false
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
        outboundOffset = 0
        reportQueuedBytes()
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
