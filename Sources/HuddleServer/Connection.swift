import HuddleIO
import HuddleWebSocket
import Logging

/// One client connection, owned by one I/O loop: bytes in from its `Transport` (through TLS on
/// the wss port), then the HTTP request (`Connection+HTTP`, routed by `HTTPRoute`), then — once
/// upgraded — WebSocket messages to and from its endpoint (`WebSocketSession`). Output is
/// queued in the transport and leaves in one write at the end of the loop turn.
///
/// This file is the life cycle: the phase (which carries each phase's state), input control,
/// deadlines, the close handshake's steps and teardown.
final class Connection: EventHandler, Flushable {
    // Stored in this order so the object stays at most 104 bytes (a 112-byte heap block): the
    // phase and the flags share a word. Every connection holds one.
    /// Strong, though the context lists its connections: a connection leaves that list when
    /// it closes, which breaks the cycle, and the context lives as long as its loop anyway.
    /// (Unowned, each of the ~5 reads a message was a checked retain and a release.)
    let context: LoopContext
    let transport: Transport
    /// Setting it keeps the transport's read interest current (closing reads again, see `readsInput`).
    var phase: Phase {
        didSet { transport.wantsInput = readsInput }
    }
    /// Set and cleared by the loop's `PendingFlushes` once per message queued and per flush,
    /// by plain loads and stores on the loop's thread: no run-time exclusivity check (see `Transport`).
    @exclusivity(unchecked) var isDirty = false
    /// A `/broadcast` publisher whose socket is not read while a subscriber is behind.
    private var readingHeld = false {
        didSet { transport.wantsInput = readsInput }
    }
    /// Shutdown: no more bytes are read while the WebSocket is open, so no new request starts;
    /// what is unread stays in the kernel and was never seen (protocol.md, close code 1001).
    private var readingStopped = false {
        didSet { transport.wantsInput = readsInput }
    }
    /// Index in the loop's connection list and in the endpoint's list (swap-remove bookkeeping).
    var slot = -1
    var endpointSlot = -1
    /// Whatever per-connection state the endpoint keeps (nil for the raw bench endpoints).
    var endpointState: AnyObject?

    /// Deadline of the current phase (handshake, body, closing, draining), on the loop's clock;
    /// while the WebSocket is open, when the next ping may be sent (`WebSocketSession`).
    var deadline: Int64
    /// Stored at every read and every write: plain stores on the loop's thread, no run-time
    /// exclusivity check (~80 instructions each, see `Transport`).
    @exclusivity(unchecked) private(set) var lastReceived: Int64
    /// When a write last made progress: a reader whose socket takes nothing holds no publisher.
    @exclusivity(unchecked) private(set) var lastWriteProgress: Int64
    /// The queue size last added to the loop's queued-bytes gauge.
    private var reportedQueuedBytes = 0

    static let closingTimeout: Int64 = 2_000
    /// Write-queue capacity an idle connection keeps; more is released by the loop's sweep (not
    /// at each flush: a busy subscriber would regrow it every turn), so idle connections stay small.
    private static let retainedOutboundCapacity = 16 * 1024

    init(fd: Int32, tls: TLSStream?, context: LoopContext) {
        self.context = context
        transport = Transport(
            fd: fd, tls: tls, loop: context.loop, registeredEvents: EventLoop.readable,
            retainedQueueCapacity: Self.retainedOutboundCapacity, releasesCapacityWhenDrained: false)
        let now = context.loop.now
        lastReceived = now
        lastWriteProgress = now
        deadline = now + Int64(context.configuration.handshakeTimeoutMilliseconds)
        phase = tls != nil ? .tlsHandshake : .httpHead(HTTPHeadParser(limits: context.headLimits))
    }

    var fd: Int32 { transport.fd }
    /// The client's address, for log lines: asked of the socket, not stored (16 bytes every
    /// idle connection would hold for the rare line). What a sign-in throttles by is kept by
    /// the endpoint, from the moment the WebSocket opened.
    var peer: String { Socket.peerAddress(transport.fd) ?? "gone" }
    var queuedOutputBytes: Int { transport.queuedByteCount }
    /// Also while closing, until the endpoint has been told the connection is gone (it counts
    /// its readers behind).
    var isBehind: Bool { session?.isBehind ?? false }
    var acceptsSharedDeflatedFrames: Bool { session?.acceptsSharedDeflatedFrames ?? false }

    // MARK: Events

    override func handleEvents(_ events: UInt32) {
        if case .tlsHandshake = phase {
            continueTLSHandshake()
            return
        }
        let retries = transport.retries(for: events)
        if events & (EventLoop.hangup | EventLoop.error) != 0 {
            // Reported whatever the interest, and again and again (level-triggered) until handled.
            if readingStopped && isOpen {
                // Shutdown keeps this WebSocket from starting new requests; the peer is gone,
                // and whatever is still queued for it can never arrive.
                abort()
            } else {
                // A held publisher's socket is read to its end.
                readingHeld = false
                readAvailable()
            }
        } else if retries.read, readsInput {
            readAvailable()
        }
        if !isClosed, retries.write { flush() }
    }

    private func continueTLSHandshake() {
        switch transport.handshake() {
        case .done:
            phase = .httpHead(HTTPHeadParser(limits: context.headLimits))
            updateInterest()
            readAvailable()
        case .inProgress:
            break
        case .endOfStream:
            abort()
        case .failed(let reason):
            context.logger.info("TLS handshake failed", metadata: ["peer": "\(peer)", "reason": "\(reason)"])
            abort()
        }
    }

    private func readAvailable() {
        guard !isClosed, !readingHeld else { return }
        let end = transport.readInPlace { bytes in
            lastReceived = context.loop.now
            consume(bytes)
            if readingHeld { updateInterest() }
            return !isClosed && !readingHeld
        }
        switch end {
        case .caughtUp, .stopped:
            break
        case .endOfStream:
            abort()
        case .failed(let reason):
            context.logger.debug("connection failed", metadata: ["peer": "\(peer)", "reason": "\(reason)"])
            abort()
        }
    }

    /// `bytes` is the loop's read buffer: a WebSocket unmasks and echoes frames in place there.
    private func consume(_ bytes: UnsafeMutableRawBufferPointer) {
        switch phase {
        case .httpHead(let parser):
            consumeHead(bytes, parser: parser)
        case .httpBody(.api(let request)):
            consumeBody(UnsafeRawBufferPointer(bytes), request)
        case .httpBody(.photo(let transfer)):
            if !bytes.isEmpty { transfer.receive(UnsafeRawBufferPointer(bytes)) }
        case .httpBody(.export):
            break  // a GET has no body; whatever follows it is not read as a request
        case .open(let session):
            session.read(bytes, from: self)
        case .closing(let closing):
            closing.session?.read(bytes, from: self)  // after an HTTP response, input is ignored
        case .tlsHandshake, .draining, .closed:
            break
        }
    }

    // MARK: Messages out

    /// Queues a data message (nothing once the WebSocket is closing).
    func send(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        if case .open(let session) = phase { session.send(opcode, payload, on: self) }
    }

    /// Queues a message just read back to its sender, framed where it lies in the read buffer
    /// (nothing once the WebSocket is closing).
    func sendBack(_ message: WebSocketBorrowedMessage) {
        if case .open(let session) = phase { session.sendBack(message, on: self) }
    }

    /// Queues a frame encoded once for many recipients.
    func sendShared(_ frame: SharedFrame) {
        if case .open(let session) = phase { session.sendShared(frame, on: self) }
    }

    // MARK: Input control

    /// Whether the socket is read: always, but while shutdown keeps an open WebSocket from
    /// starting new requests. Closing reads again (for the peer's close frame: data messages
    /// are dropped there). A publisher held back (its readers are behind) is not read either.
    private var readsInput: Bool { !readingHeld && !(readingStopped && isOpen) }

    /// Stops reading this connection's socket until `resumeReading` (TCP backpressure on a
    /// `/broadcast` publisher while a subscriber is behind).
    func holdReading() {
        guard isOpen, !readingHeld else { return }
        readingHeld = true
        context.metrics.loop(context.loop.index).publishersHeld.add(1, ordering: .relaxed)
        updateInterest()
    }

    /// Closing: a held publisher reads again (its close frame is what the close waits for).
    func stopHoldingReading() {
        guard readingHeld else { return }
        readingHeld = false
        updateInterest()
    }

    func resumeReading() {
        guard readingHeld else { return }
        readingHeld = false
        guard !isClosed else { return }
        updateInterest()
        // TLS may hold decrypted bytes the socket's readiness will not announce again.
        readAvailable()
    }

    /// Shutdown: stop reading this open WebSocket; the requests already read are still answered.
    func stopReading() {
        guard isOpen, !readingStopped else { return }
        readingStopped = true
        updateInterest()
    }

    /// Requests read on this connection and not answered yet (a reply queued counts as answered).
    var requestsUnanswered: Int {
        guard case .open(let session) = phase, let endpoint = session.endpoint else { return 0 }
        return endpoint.requestsUnanswered(self)
    }

    private func updateInterest() {
        guard !isClosed else { return }
        transport.wantsInput = readsInput
        transport.updateInterest()
    }

    // MARK: Writing

    /// Writes as much of the queue as the socket takes: called once per loop turn for every
    /// connection that queued something (so many messages leave in one system call), and again
    /// when the socket turns writable.
    func flush() {
        if case .tlsHandshake = phase { return }
        guard !isClosed else { return }
        let (end, wrote) = transport.flush()
        if wrote > 0 {
            lastWriteProgress = context.loop.now
            if case .closing(let closing) = phase, let extended = closing.extendedByProgress {
                switch extended {
                case .photoResponse: deadline = context.loop.now + Int64(context.configuration.idleTimeoutMilliseconds)
                case .slowConsumer: deadline = context.loop.now + slowConsumerClosingTimeout
                }
            }
        }
        switch end {
        case .endOfStream, .failed:
            abort()
        case .pending:
            wroteSome(progressed: wrote > 0)
        case .drained:
            wroteSome(progressed: wrote > 0)
            if let session, session.framesStart > 0 {
                session.framesStart = 0
                // The 101 response left and nothing is queued: a connection that has not been
                // sent anything yet keeps no buffer (most of an idle connection's memory).
                transport.releaseQueueStorage()
            }
            if case .closing(let closing) = phase, closing.shutdownAfterFlush { shutDownOurSide() }
        }
    }

    /// After a flush: the session's backpressure and the loop's queued-bytes gauge follow the queue.
    private func wroteSome(progressed: Bool) {
        session?.wroteSome(progressed: progressed, on: self)
        // The export archive queues more as its reader takes bytes.
        if case .httpBody(.export(let transfer)) = phase { transfer.wrote(progressed: progressed) }
        reportQueuedBytes()
    }

    /// Brings the loop's queued-bytes gauge to this queue's size: once per flush, not per message.
    private func reportQueuedBytes() {
        let queued = queuedOutputBytes
        guard queued != reportedQueuedBytes else { return }
        context.metrics.loop(context.loop.index).outboundQueuedBytes.add(queued - reportedQueuedBytes, ordering: .relaxed)
        reportedQueuedBytes = queued
    }

    func shutDownOurSide() {
        transport.shutdownOutput()
        phase = .draining
        transport.discardQueue()
        reportQueuedBytes()
        deadline = context.loop.now + Self.closingTimeout
    }

    // MARK: Time

    /// Called by the loop's periodic sweep: enforces handshake, body, idle and closing
    /// deadlines and pings quiet peers.
    func checkDeadlines(now: Int64) {
        switch phase {
        case .tlsHandshake:
            if now >= deadline {
                context.logger.info("TLS handshake timeout", metadata: ["peer": "\(peer)"])
                abort()
            }
        case .httpHead:
            if now >= deadline {
                context.logger.info("HTTP handshake timeout", metadata: ["peer": "\(peer)"])
                respond(.text(408, "handshake timeout"))
            }
        case .httpBody(let body):
            checkBodyDeadline(body, now: now)
        case .open(let session):
            session.checkDeadlines(now: now)
        case .closing, .draining:
            if now >= deadline { abort() }
        case .closed:
            break
        }
    }

    // MARK: Teardown

    /// Closes the socket now, whatever is queued.
    func abort() {
        guard !isClosed else { return }
        if case .open(let session) = phase { session.detach() }
        phase = .closed
        transport.close()
        reportQueuedBytes()
        context.remove(self)
    }
}
