/// Turns the bytes of a WebSocket connection into whole messages and control frames
/// (RFC 6455 §5, with RFC 7692 compressed messages), enforcing every rule a peer can break and
/// naming the close code each violation calls for.
///
/// A value type: each connection owns one and mutates it in place on its I/O loop. Bytes may
/// arrive in any split. A frame that is wholly inside one `read` is parsed from the caller's
/// buffer and unmasked straight into the message's own array, so a message that fits in one read
/// costs one allocation: the array the event hands over — or none through `read(inPlace:message:_:)`,
/// which unmasks such a message in the caller's buffer and lends it. Only a partial header (kept
/// inline, no allocation) or a partial message stays between calls, and an idle reader holds no
/// heap memory.
public struct WebSocketMessageReader {
    // Stored in this order, the words first and the bytes together, so a server's idle
    // connection (which holds one) carries no padding: 103 bytes.
    /// Set once the handshake negotiated permessage-deflate; until then RSV1 is a protocol error.
    public var inflater: (any WebSocketMessageInflater)?
    /// The largest message accepted, in bytes as received (compressed bytes when compressed) and,
    /// for compressed messages, also after inflating.
    public var maxMessageSize: Int
    private var message: [UInt8] = []
    private var controlPayload: [UInt8] = []
    /// Follows an uncompressed text message across reads and fragments so bad UTF-8 fails at once.
    private var textValidator = UTF8Validator()
    private var failure: (any Error)?
    private var partialHeader = PartialFrameHeader()
    private let role: WebSocketRole
    /// The data message being assembled: text or binary while one is in progress, else nil.
    private var messageOpcode: WebSocketOpcode?
    private var messageIsCompressed = false
    private var closeReceived = false
    /// The frame whose payload is being read; nil between frames.
    private var frame: FrameInProgress?

    public init(role: WebSocketRole, maxMessageSize: Int, inflater: (any WebSocketMessageInflater)? = nil) {
        self.role = role
        self.maxMessageSize = maxMessageSize
        self.inflater = inflater
    }

    /// Bytes received and held for a partial header, control frame or message; 0 when nothing
    /// is partial, and then no array capacity is kept either. (While a frame is partly received,
    /// capacity for the rest of it, at most `maxMessageSize`, is already reserved.)
    public var bufferedByteCount: Int {
        partialHeader.count + message.count + controlPayload.count
    }

    /// Whether a new reader with the same settings would go on exactly as this one: no header,
    /// frame or fragmented message partly read, no close frame received, no failure. An owner
    /// may then drop the reader and make a new one for the next bytes, so that what it keeps
    /// per idle connection is only the settings.
    public var isAtMessageBoundary: Bool {
        frame == nil && partialHeader.count == 0 && messageOpcode == nil && !closeReceived && failure == nil
    }

    /// Feed bytes as read from the socket (any split, down to 1 byte at a time). Calls `onEvent`
    /// for each complete control frame and data message, in order.
    ///
    /// Throws a `WebSocketError` at the first violation (its close code is the one to send).
    /// After any throw, including one from `onEvent`, the reader is dead: it drops what it held
    /// and every later call throws the same error. After a close frame has been delivered,
    /// further bytes are ignored.
    public mutating func read(_ bytes: UnsafeRawBufferPointer, _ onEvent: (WebSocketEvent) throws -> Void) throws {
        if let failure { throw failure }
        guard !closeReceived else { return }
        do {
            try consume(bytes, onEvent)
        } catch {
            failure = error
            releaseBuffers()
            throw error
        }
    }

    /// `read(_:_:)` for a caller whose buffer is scratch it may spend (an event loop's read
    /// buffer). A data message that is one final, uncompressed frame lying wholly in `bytes`,
    /// with no message being assembled, is unmasked and validated where it lies and handed to
    /// `onMessage` borrowed: no copy, no allocation. Everything else — fragments, frames split
    /// across reads, compressed messages, control frames, and every frame that breaks a rule —
    /// goes through the same path as in `read(_:_:)`, so the rules, their order, the errors and
    /// the events are the same. `bytes` is changed: unmasked, and a borrowed message may write
    /// its own frame header over the received one (`framedInPlace`).
    public mutating func read(
        inPlace bytes: UnsafeMutableRawBufferPointer,
        message onMessage: (WebSocketBorrowedMessage) throws -> Void,
        _ onEvent: (WebSocketEvent) throws -> Void
    ) throws {
        if let failure { throw failure }
        guard !closeReceived else { return }
        do {
            var offset = 0
            while offset < bytes.count && !closeReceived {
                if frame == nil, partialHeader.count == 0, messageOpcode == nil,
                    let taken = try Self.readWholeMessage(
                        in: bytes, at: offset, role: role, maxMessageSize: maxMessageSize, onMessage)
                {
                    offset += taken
                } else {
                    offset += try step(UnsafeRawBufferPointer(rebasing: bytes[offset...]), onEvent)
                }
            }
        } catch {
            failure = error
            releaseBuffers()
            throw error
        }
    }

    /// The run of whole messages at the start of `bytes` that a reader with these settings, at
    /// a message boundary, would read in place (`read(inPlace:message:_:)`'s path: final,
    /// uncompressed text or binary frames lying wholly in `bytes`): unmasked, validated and lent
    /// to `onMessage` in order. Returns how many bytes they took, stopping at the first frame
    /// that path does not take (a partial or fragmented frame, a control or compressed frame, a
    /// frame breaking a header rule), which is left for a reader. So an owner that keeps no
    /// reader between messages (an idle connection's memory) builds one only for what is left;
    /// a read of whole messages builds none. Throws what the reader would for the same bytes
    /// (text that is not UTF-8), after which the owner must treat the stream as failed.
    public static func readWholeMessages(
        inPlace bytes: UnsafeMutableRawBufferPointer, role: WebSocketRole, maxMessageSize: Int,
        _ onMessage: (WebSocketBorrowedMessage) throws -> Void
    ) throws -> Int {
        var offset = 0
        while offset < bytes.count,
            let taken = try readWholeMessage(in: bytes, at: offset, role: role, maxMessageSize: maxMessageSize, onMessage)
        {
            offset += taken
        }
        return offset
    }

    private mutating func consume(_ bytes: UnsafeRawBufferPointer, _ onEvent: (WebSocketEvent) throws -> Void) throws {
        var unread = bytes
        while !unread.isEmpty && !closeReceived {
            let taken = try step(unread, onEvent)
            unread = UnsafeRawBufferPointer(rebasing: unread[taken...])
        }
    }

    /// Reads one header or one piece of a payload (at least one byte of `unread`) and finishes
    /// the frame once it is complete; returns how many bytes it took.
    private mutating func step(_ unread: UnsafeRawBufferPointer, _ onEvent: (WebSocketEvent) throws -> Void) throws -> Int {
        let taken: Int
        if let frame {
            taken = try readPayload(of: frame, from: unread)
        } else {
            taken = try readHeader(from: unread)
        }
        // Also reached straight after a header with an empty payload.
        if let frame, frame.remaining == 0 {
            self.frame = nil
            try finish(frame, onEvent)
        }
        return taken
    }

    /// The in-place path of `read(inPlace:message:_:)`: the frame at `offset`, when it is a whole
    /// final uncompressed text or binary frame that breaks no header rule, unmasked in place,
    /// validated and delivered; returns its length. Nil, having changed nothing, for any other
    /// frame: the general path reads it (and names its fault).
    private static func readWholeMessage(
        in bytes: UnsafeMutableRawBufferPointer, at offset: Int, role: WebSocketRole, maxMessageSize: Int,
        _ onMessage: (WebSocketBorrowedMessage) throws -> Void
    ) throws -> Int? {
        let available = bytes.count - offset
        guard available >= 2, let start = bytes.baseAddress.map({ $0 + offset }) else { return nil }
        let opcode: WebSocketOpcode
        switch start.load(as: UInt8.self) {
        case 0x81: opcode = .text  // FIN, no RSV bit
        case 0x82: opcode = .binary
        default: return nil
        }
        let secondByte = start.load(fromByteOffset: 1, as: UInt8.self)
        guard (secondByte & 0x80 != 0) == (role == .server) else { return nil }
        let headerCount = WebSocketFrameHeader.byteCount(secondByte: secondByte)
        guard available >= headerCount else { return nil }
        let header = WebSocketFrameHeader(decoding: UnsafeRawBufferPointer(start: start, count: headerCount))
        // Within the size limit (which also rules out a 64-bit length with its top bit set).
        guard header.payloadLength <= UInt64(maxMessageSize), header.payloadLength <= UInt64(available - headerCount) else {
            return nil
        }
        let count = Int(header.payloadLength)
        let payload = start + headerCount
        if let maskingKey = header.maskingKey {
            WebSocketMasking.apply(maskingKey: maskingKey, keyOffset: 0, from: payload, to: payload, count: count)
        }
        if opcode == .text {
            var validator = UTF8Validator()
            guard validator.validate(UnsafeRawBufferPointer(start: payload, count: count)) else {
                throw WebSocketError(.invalidPayloadData, "text message is not valid UTF-8")
            }
            guard validator.isAtCharacterBoundary else {
                throw WebSocketError(.invalidPayloadData, "text message ends inside a UTF-8 sequence")
            }
        }
        try onMessage(WebSocketBorrowedMessage(opcode: opcode, payloadStart: payload, payloadCount: count, headroom: headerCount))
        return headerCount + count
    }

    // MARK: Headers

    /// Consumes header bytes; once the header is complete, judges it and starts its frame.
    private mutating func readHeader(from unread: UnsafeRawBufferPointer) throws -> Int {
        if partialHeader.count == 0, unread.count >= 2 {
            let length = WebSocketFrameHeader.byteCount(secondByte: unread[1])
            if unread.count >= length {
                try begin(WebSocketFrameHeader(decoding: unread))
                return length
            }
        }
        var taken = partialHeader.fill(upTo: 2, from: unread)
        guard partialHeader.count >= 2 else { return taken }
        let length = WebSocketFrameHeader.byteCount(secondByte: partialHeader.secondByte)
        taken += partialHeader.fill(upTo: length, from: UnsafeRawBufferPointer(rebasing: unread[taken...]))
        if partialHeader.count == length {
            let header = partialHeader.withBytes { WebSocketFrameHeader(decoding: $0) }
            partialHeader.removeAll()
            try begin(header)
        }
        return taken
    }

    /// Applies every rule a header can break, in a fixed order so any split of the same bytes
    /// fails with the same error, and checks the size before a single payload byte is stored.
    private mutating func begin(_ header: WebSocketFrameHeader) throws {
        if header.rsv2 || header.rsv3 {
            throw Self.protocolError("RSV2 or RSV3 set, but no extension defines them")
        }
        guard let opcode = WebSocketOpcode(rawValue: header.opcodeBits) else {
            throw Self.protocolError("reserved opcode \(header.opcodeBits)")
        }
        switch role {
        case .server where header.maskingKey == nil:
            throw Self.protocolError("client frames must be masked")
        case .client where header.maskingKey != nil:
            throw Self.protocolError("server frames must not be masked")
        default:
            break
        }
        if header.payloadLength >> 63 != 0 {
            throw Self.protocolError("64-bit payload length has its most significant bit set")
        }
        if opcode.isControl {
            guard header.fin else { throw Self.protocolError("fragmented control frame") }
            guard header.payloadLength <= Self.maximumControlPayload else {
                throw Self.protocolError("control frame payload over 125 bytes")
            }
            guard !header.rsv1 else { throw Self.protocolError("RSV1 set on a control frame") }
        } else {
            if opcode == .continuation {
                guard messageOpcode != nil else {
                    throw Self.protocolError("continuation frame with no message in progress")
                }
                guard !header.rsv1 else { throw Self.protocolError("RSV1 set on a continuation frame") }
            } else {
                guard messageOpcode == nil else {
                    throw Self.protocolError("new data frame before the fragmented message ended")
                }
                guard !header.rsv1 || inflater != nil else {
                    throw Self.protocolError("RSV1 set, but permessage-deflate was not negotiated")
                }
            }
            let room = maxMessageSize > message.count ? maxMessageSize - message.count : 0
            guard header.payloadLength <= UInt64(room) else {
                throw WebSocketError(.messageTooBig, "message over \(maxMessageSize) bytes")
            }
            if opcode != .continuation {
                messageOpcode = opcode
                messageIsCompressed = header.rsv1
                textValidator.reset()
            }
        }
        frame = FrameInProgress(
            opcode: opcode, maskingKey: header.maskingKey, isFinal: header.fin,
            remaining: Int(header.payloadLength))
    }

    // MARK: Payloads

    private mutating func readPayload(of frame: FrameInProgress, from unread: UnsafeRawBufferPointer) throws -> Int {
        var frame = frame
        let chunk = UnsafeRawBufferPointer(rebasing: unread[..<min(frame.remaining, unread.count)])
        if frame.opcode.isControl {
            Self.append(chunk, of: frame, to: &controlPayload, limit: Self.maximumControlPayload)
        } else {
            let start = message.count
            Self.append(chunk, of: frame, to: &message, limit: maxMessageSize)
            if messageOpcode == .text && !messageIsCompressed {
                try validateText(from: start)
            }
        }
        frame.received += chunk.count
        frame.remaining -= chunk.count
        self.frame = frame
        return chunk.count
    }

    /// Appends a piece of `frame`'s payload to `array`, unmasked. `limit` bounds the whole array.
    private static func append(
        _ chunk: UnsafeRawBufferPointer, of frame: FrameInProgress, to array: inout [UInt8], limit: Int
    ) {
        guard !chunk.isEmpty else { return }
        let start = array.count
        if chunk.count < frame.remaining && array.capacity < start + frame.remaining {
            // The frame goes on in later reads: make room for all of it now rather than regrowing
            // (and re-faulting pages) read after read. Its length passed the size check, so this
            // is bounded by `limit`; doubling keeps a many-fragment message from copying per fragment.
            array.reserveCapacity(max(start + frame.remaining, min(2 * array.capacity, limit)))
        }
        // Copy, then unmask in place while the bytes are in cache. (Building a fresh array with
        // `init(unsafeUninitializedCapacity:)` would save the copy but costs a generic-metadata
        // lookup in the runtime per allocation, slower for the typical small message.)
        array.append(contentsOf: chunk)
        if let maskingKey = frame.maskingKey {
            array.withUnsafeMutableBytes { storage in
                let payload = storage.baseAddress! + start
                WebSocketMasking.apply(
                    maskingKey: maskingKey, keyOffset: frame.received, from: payload, to: payload, count: chunk.count)
            }
        }
    }

    /// Validates the text bytes appended since `start`, failing before the message is complete.
    private mutating func validateText(from start: Int) throws {
        var validator = textValidator
        let isValid = message.withUnsafeBytes { validator.validate(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        textValidator = validator
        guard isValid else { throw WebSocketError(.invalidPayloadData, "text message is not valid UTF-8") }
    }

    // MARK: Complete frames and messages

    private mutating func finish(_ frame: FrameInProgress, _ onEvent: (WebSocketEvent) throws -> Void) throws {
        switch frame.opcode {
        case .ping:
            try onEvent(.ping(takeControlPayload()))
        case .pong:
            try onEvent(.pong(takeControlPayload()))
        case .close:
            let event = try Self.closeEvent(body: takeControlPayload())
            closeReceived = true
            releaseBuffers()
            try onEvent(event)
        case .text, .binary, .continuation:
            if frame.isFinal { try deliverMessage(onEvent) }
        }
    }

    private mutating func deliverMessage(_ onEvent: (WebSocketEvent) throws -> Void) throws {
        var payload = message
        message = []
        let isText = messageOpcode == .text
        let isCompressed = messageIsCompressed
        messageOpcode = nil
        messageIsCompressed = false

        if isCompressed {
            guard let inflater else {
                throw Self.protocolError("compressed message, but permessage-deflate is off")
            }
            payload = try inflater.inflate(payload, maxSize: maxMessageSize)
            // The inflater promises this; a broken one must not get past the limit either.
            guard payload.count <= maxMessageSize else {
                throw WebSocketError(.messageTooBig, "message over \(maxMessageSize) bytes")
            }
            if isText {
                var validator = UTF8Validator()
                let isValid = payload.withUnsafeBytes { validator.validate($0) } && validator.isAtCharacterBoundary
                guard isValid else { throw WebSocketError(.invalidPayloadData, "text message is not valid UTF-8") }
            }
        } else if isText {
            guard textValidator.isAtCharacterBoundary else {
                throw WebSocketError(.invalidPayloadData, "text message ends inside a UTF-8 sequence")
            }
        }
        try onEvent(isText ? .text(payload) : .binary(payload))
    }

    /// RFC 6455 §5.5.1: an empty body, or a 2-byte code then a UTF-8 reason.
    private static func closeEvent(body: [UInt8]) throws -> WebSocketEvent {
        if body.isEmpty { return .close(nil, reason: "") }
        guard body.count >= 2 else { throw protocolError("close frame body of 1 byte") }
        let code = WebSocketCloseCode(rawValue: UInt16(body[0]) << 8 | UInt16(body[1]))
        guard code.isValidOnWire else { throw protocolError("close code \(code) may not be sent") }
        let reason = body[2...]
        var validator = UTF8Validator()
        let isValid = reason.withUnsafeBytes { validator.validate($0) } && validator.isAtCharacterBoundary
        guard isValid else { throw WebSocketError(.invalidPayloadData, "close reason is not valid UTF-8") }
        return .close(code, reason: String(decoding: reason, as: UTF8.self))
    }

    private mutating func takeControlPayload() -> [UInt8] {
        let payload = controlPayload
        controlPayload = []
        return payload
    }

    /// Drops everything held, capacity included: a dead or closed reader keeps no memory.
    private mutating func releaseBuffers() {
        partialHeader.removeAll()
        frame = nil
        message = []
        controlPayload = []
        messageOpcode = nil
        messageIsCompressed = false
        textValidator.reset()
    }

    /// RFC 6455 §5.5: control frames carry at most 125 bytes.
    private static let maximumControlPayload = 125

    private static func protocolError(_ reason: String) -> WebSocketError {
        WebSocketError(.protocolError, reason)
    }
}

/// Where the reader is inside the payload of one frame.
private struct FrameInProgress {
    var remaining: Int
    /// Payload bytes already read, which positions the masking key for the next piece.
    var received = 0
    var maskingKey: UInt32?
    var opcode: WebSocketOpcode
    var isFinal: Bool

    init(opcode: WebSocketOpcode, maskingKey: UInt32?, isFinal: Bool, remaining: Int) {
        self.remaining = remaining
        self.maskingKey = maskingKey
        self.opcode = opcode
        self.isFinal = isFinal
    }
}

/// The first bytes of a header whose rest has not arrived yet. At most 13 bytes wait here,
/// stored inline so a header split across reads costs no allocation.
private struct PartialFrameHeader {
    private var storage: (UInt64, UInt64) = (0, 0)
    /// One byte (at most 13 are ever held), so the reader's small fields pack after it.
    private var storedCount: UInt8 = 0

    var count: Int { Int(storedCount) }

    /// Valid once `count >= 2`.
    var secondByte: UInt8 { withBytes { $0[1] } }

    /// Takes bytes from `source` until `count` reaches `target`; returns how many it took.
    mutating func fill(upTo target: Int, from source: UnsafeRawBufferPointer) -> Int {
        let start = count
        let taken = min(max(0, target - start), source.count)
        guard taken > 0, let sourceBase = source.baseAddress else { return 0 }
        withUnsafeMutableBytes(of: &storage) { bytes in
            (bytes.baseAddress! + start).copyMemory(from: sourceBase, byteCount: taken)
        }
        storedCount = UInt8(start + taken)
        return taken
    }

    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let count = self.count
        return withUnsafeBytes(of: storage) { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    mutating func removeAll() {
        storedCount = 0
    }
}
