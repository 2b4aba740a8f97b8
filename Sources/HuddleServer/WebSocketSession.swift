import HuddleIO
import HuddleWebSocket
import Logging

/// The WebSocket half of an upgraded connection: frames in through the message reader (and
/// permessage-deflate), messages to and from the endpoint, frames out into the connection's
/// transport, and the reader's backpressure (`WebSocketSession+Backpressure.swift`). Lives in
/// the connection's `.open` phase and, while the close handshake runs, in `.closing`.
final class WebSocketSession {
    // Stored in this order so the object stays at most 104 bytes (a 112-byte heap block): the
    // small fields share the word after the drain mark's tag byte. Every open connection holds one.
    /// Each read of an unowned reference is a checked strong retain: the per-message paths
    /// read it once into a local.
    unowned let connection: Connection
    /// Kept after the session is over for its message size limit, which the close handshake's
    /// reads still apply (not stored apart: 8 bytes every connection would hold).
    private let servedEndpoint: any WebSocketEndpoint
    /// The inflater agreed for compressed messages (nil: permessage-deflate is off), handed to
    /// each message reader.
    private let inflater: (any WebSocketMessageInflater)?
    /// The message reader, kept between reads only while it holds part of a header, frame or
    /// fragmented message (or has failed or read the close frame); at a message boundary it is
    /// dropped, so an idle connection keeps none. A read with none in progress takes its whole
    /// messages without one (`readWholeMessages`) and builds one only for what follows them.
    /// No run-time
    /// exclusivity check: nothing else touches it during a read (`stopParsing` during a read
    /// only sets `parsingStopped`, and a read inside a read stops the process, `isReading`).
    @exclusivity(unchecked) private var readerInProgress: ReaderInProgress?
    /// The queue's end (in `Transport.writtenBytes` terms) when the sweep found bytes waiting,
    /// and when: those bytes must be written by `since` + the slow-reader timeout.
    var drainMark: (end: Int, since: Int64)?
    /// Over the backpressure threshold and still draining: publishers to it wait (`BackpressureRule`).
    var isBehind = false
    /// Its socket took nothing for the stall time: not behind (holds nobody) until a write
    /// makes progress again.
    var isStalled = false
    @exclusivity(unchecked) private var isReading = false
    @exclusivity(unchecked) private var parsingStopped = false
    /// The session is over (`detach`): the endpoint has forgotten the connection.
    private var isDetached = false
    /// The window of our compressed messages (8–15); 0 when permessage-deflate was not agreed
    /// (not an optional: its tag byte would cost the object a larger heap block).
    private let serverMaxWindowBits: UInt8
    /// Where frames begin in the transport's queue (after a 101 response still queued): a few
    /// hundred bytes at most, so 32 bits.
    private var framesStartOffset: Int32 = 0
    /// Only when the client refused server_no_context_takeover: its own compression context.
    private let privateDeflater: PerMessageDeflater?

    /// Accepts the upgrade `request` for `endpoint`: negotiates permessage-deflate and queues
    /// the 101 response.
    init(connection: Connection, endpoint: any WebSocketEndpoint, request: WebSocketHandshake.Request, subprotocol: String?) {
        self.connection = connection
        servedEndpoint = endpoint
        let context = connection.context
        var extensionHeader: String?
        var inflater: PerMessageInflater?
        var privateDeflater: PerMessageDeflater?
        if let (parameters, header) = PerMessageDeflateNegotiation.negotiate(offers: request.extensionOffers, options: context.deflateOptions) {
            serverMaxWindowBits = UInt8(parameters.serverMaxWindowBits)
            extensionHeader = header
            inflater = parameters.clientNoContextTakeover
                ? context.sharedInflater
                : PerMessageInflater(windowBits: parameters.clientMaxWindowBits, noContextTakeover: false)
            if !parameters.serverNoContextTakeover {
                privateDeflater = PerMessageDeflater(windowBits: parameters.serverMaxWindowBits, noContextTakeover: false)
            }
        } else {
            serverMaxWindowBits = 0
        }
        self.privateDeflater = privateDeflater
        self.inflater = inflater
        // No ping sent yet: the first may go as soon as the peer is quiet (see `checkDeadlines`).
        connection.deadline = 0
        let transport = connection.transport
        transport.enqueue(WebSocketHandshake.upgradeResponse(key: request.key, extensionHeader: extensionHeader, subprotocol: subprotocol))
        framesStart = transport.queuedByteCount
    }

    /// Until the session is over (closing or gone): then the endpoint has forgotten the connection.
    var endpoint: (any WebSocketEndpoint)? { isDetached ? nil : servedEndpoint }

    /// Whether this connection can be sent the shared compressed form of a fan-out frame:
    /// server_no_context_takeover (no private deflater) with the full window. Derived, not
    /// stored: a byte more and the object would take a larger heap block.
    var acceptsSharedDeflatedFrames: Bool { serverMaxWindowBits == 15 && privateDeflater == nil }

    /// Where frames begin in the transport's queue (after a 101 response still queued).
    var framesStart: Int {
        get { Int(framesStartOffset) }
        set { framesStartOffset = Int32(newValue) }
    }

    // MARK: Frames in

    /// Feeds the reader the loop's read buffer, where whole messages are unmasked and handed
    /// on in place. `connection` is this session's (passed in: each read of the unowned
    /// property is a checked retain). Failures are acted on after the reader returns.
    func read(_ bytes: UnsafeMutableRawBufferPointer, from connection: Connection) {
        guard !parsingStopped else { return }
        precondition(!isReading, "a WebSocket session read inside its own read")
        isReading = true
        var failure: WebSocketError?
        do {
            var rest = bytes
            if readerInProgress == nil {
                // The usual read, whole messages only, builds no reader (a reader's settings
                // and state cost ~350 instructions to set up and tear down per read).
                let taken = try WebSocketMessageReader.readWholeMessages(
                    inPlace: bytes, role: .server, maxMessageSize: servedEndpoint.maxMessageSize
                ) { message in
                    self.received(message, on: connection)
                }
                rest = UnsafeMutableRawBufferPointer(rebasing: bytes[taken...])
            }
            if !rest.isEmpty { try readWithReader(rest, connection) }
        } catch let error as WebSocketError {
            failure = error
        } catch {
            failure = WebSocketError(.internalError, "unexpected error")
        }
        isReading = false
        if let failure { connection.fail(failure) }
        if parsingStopped { readerInProgress = nil }
    }

    /// What the whole-message path left: through the reader in progress, or a new one, kept
    /// afterwards only mid-message (also when it throws: a failed reader is not at a boundary).
    private func readWithReader(_ bytes: UnsafeMutableRawBufferPointer, _ connection: Connection) throws {
        var reader = takeReader()
        defer { keep(reader) }
        try reader.read(inPlace: bytes) { message in
            self.received(message, on: connection)
        } _: { event in
            self.handle(event, connection)
        }
    }

    /// The reader kept from the last read (moved out, so its buffers stay uniquely referenced
    /// and grow in place), or a new one.
    private func takeReader() -> WebSocketMessageReader {
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: servedEndpoint.maxMessageSize, inflater: inflater)
        if let readerInProgress { swap(&reader, &readerInProgress.reader) }
        return reader
    }

    /// Keeps `reader` for the next read unless a new one would do the same.
    private func keep(_ reader: WebSocketMessageReader) {
        guard !reader.isAtMessageBoundary else {
            readerInProgress = nil
            return
        }
        if let readerInProgress {
            readerInProgress.reader = reader
        } else {
            readerInProgress = ReaderInProgress(reader)
        }
    }

    /// The connection failed: input is discarded from now on (the reader's memory freed once
    /// it is not running).
    func stopParsing() {
        parsingStopped = true
        if !isReading { readerInProgress = nil }
    }

    private func handle(_ event: WebSocketEvent, _ connection: Connection) {
        switch event {
        case .text(let payload):
            received(.text, payload, on: connection)
        case .binary(let payload):
            received(.binary, payload, on: connection)
        case .ping(let payload):
            if connection.isOpen { enqueueFrame(.pong, payload) }
        case .pong:
            break  // any input already refreshed the connection's lastReceived
        case .close(let code, _):
            connection.closeFrameReceived(code: code)
        }
    }

    private func received(_ opcode: WebSocketOpcode, _ payload: [UInt8], on connection: Connection) {
        guard connection.isOpen else { return }
        let context = connection.context
        context.metrics.loop(context.loop.index).messagesReceived.add(1, ordering: .relaxed)
        endpoint?.received(opcode, payload, from: connection)
    }

    private func received(_ message: WebSocketBorrowedMessage, on connection: Connection) {
        guard connection.isOpen else { return }
        let context = connection.context
        context.metrics.loop(context.loop.index).messagesReceived.add(1, ordering: .relaxed)
        endpoint?.received(message, from: connection)
    }

    // MARK: Frames out

    /// Queues a data message. Compressed when permessage-deflate was agreed and it is worth it.
    /// `connection` is this session's (see `read`).
    func send(_ opcode: WebSocketOpcode, _ payload: [UInt8], on connection: Connection) {
        let context = connection.context
        guard admitOutput(connection, context) else { return }
        if compresses(payload.count) {
            payload.withUnsafeBytes { enqueueCompressed(opcode, $0, connection, context) }
        } else {
            connection.transport.appendToQueue { WebSocketFrameWriter.append(opcode: opcode, payload: payload, to: &$0) }
        }
        messageQueued(connection, context)
    }

    /// Queues a message just read back to its sender: framed where it lies (one copy into the
    /// queue, header and payload together), or compressed like any message.
    func sendBack(_ message: WebSocketBorrowedMessage, on connection: Connection) {
        let context = connection.context
        guard admitOutput(connection, context) else { return }
        if compresses(message.payload.count) {
            enqueueCompressed(message.opcode, message.payload, connection, context)
        } else {
            connection.transport.enqueue(message.framedInPlace())
        }
        messageQueued(connection, context)
    }

    /// Whether a message of `count` bytes goes out compressed: permessage-deflate was agreed
    /// and it is worth it.
    private func compresses(_ count: Int) -> Bool {
        serverMaxWindowBits > 0 && count >= PerMessageDeflater.minimumCompressibleSize
    }

    private func enqueueCompressed(
        _ opcode: WebSocketOpcode, _ payload: UnsafeRawBufferPointer, _ connection: Connection, _ context: LoopContext
    ) {
        let deflater = privateDeflater ?? context.sharedDeflater(windowBits: Int(serverMaxWindowBits))
        let compressed = deflater.compress(payload)
        connection.transport.appendToQueue { WebSocketFrameWriter.append(opcode: opcode, payload: compressed, rsv1: true, to: &$0) }
    }

    /// Queues a frame encoded once for many recipients. `connection` is this session's.
    func sendShared(_ frame: SharedFrame, on connection: Connection) {
        let context = connection.context
        guard admitOutput(connection, context) else { return }
        if acceptsSharedDeflatedFrames, let deflated = frame.deflated {
            connection.transport.enqueue(deflated)
        } else {
            connection.transport.enqueue(frame.plain)
        }
        messageQueued(connection, context)
    }

    private func messageQueued(_ connection: Connection, _ context: LoopContext) {
        context.metrics.loop(context.loop.index).messagesSent.add(1, ordering: .relaxed)
        if !isBehind, !isStalled, connection.queuedOutputBytes > context.backpressure.behindBytes { setBehind(true) }
        context.markDirty(connection)
    }

    /// Control frames (ping, pong, close).
    func enqueueFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        connection.transport.appendToQueue { WebSocketFrameWriter.append(opcode: opcode, payload: payload, to: &$0) }
        connection.context.markDirty(connection)
    }

    /// The session is over (closing or gone): the endpoint forgets the connection.
    func detach() {
        guard !isDetached else { return }
        isDetached = true
        servedEndpoint.connectionClosed(connection)
        let metrics = connection.context.metrics.loop(connection.context.loop.index)
        if isBehind {
            isBehind = false
            metrics.readersBehind.subtract(1, ordering: .relaxed)
        }
        metrics.webSocketsClosed.add(1, ordering: .relaxed)
    }

    // MARK: Time

    /// The open session's deadlines: idle timeout, the slow-reader rule, pings to quiet peers.
    func checkDeadlines(now: Int64) {
        // The two fields, not the configuration: a copy of the whole struct retained and released
        // every reference it holds, for every connection every sweep (14 % of an idle node's CPU
        // at 20,000 connections).
        let idleTimeout = Int64(connection.context.configuration.idleTimeoutMilliseconds)
        let pingInterval = Int64(connection.context.configuration.pingIntervalMilliseconds)
        let silence = now - connection.lastReceived
        if silence >= idleTimeout {
            connection.fail(WebSocketError(.policyViolation, "idle timeout: no data or pong for \(silence / 1000) s"))
        } else if checkDrain(now: now) {
            return
        } else if silence >= pingInterval,
            now >= connection.deadline
        {
            // While open, the connection's deadline is when the next ping may go: not stored
            // here, 8 bytes every connection would hold.
            connection.deadline = now + pingInterval
            enqueueFrame(.ping, [])
        } else if now - connection.lastWriteProgress >= Self.quietTimeBeforeBufferRelease {
            // A connection sent nothing for a while keeps no write buffer (idle memory); the
            // next message allocates one again.
            connection.transport.releaseQueueStorage()
        }
    }

    /// How long a connection's emptied write buffer is kept for the next message.
    static let quietTimeBeforeBufferRelease: Int64 = 1_000
}

/// A message reader between two reads of its connection, while it holds partial input (see
/// `WebSocketSession.readerInProgress`).
private final class ReaderInProgress {
    var reader: WebSocketMessageReader

    init(_ reader: WebSocketMessageReader) { self.reader = reader }
}
