/// Encodes frames (RFC 6455 §5.2) with the shortest length form.
///
/// Frames are appended to a caller's buffer so a connection can cork everything it has to send
/// in one loop turn into a single write, and a broadcast can encode a message once and write the
/// same bytes to every subscriber.
public enum WebSocketFrameWriter {
    /// Appends one frame to `buffer`. `maskingKey` nil writes an unmasked frame (server role);
    /// a client passes a fresh random key per frame, whose big-endian bytes are the key on the
    /// wire (`0x37fa_213d` is `37 fa 21 3d`).
    ///
    /// - Precondition: a control frame has `fin` set and at most 125 payload bytes; anything else
    ///   is a bug in the caller and would be a protocol violation on the wire.
    public static func append(
        opcode: WebSocketOpcode,
        payload: UnsafeRawBufferPointer,
        fin: Bool = true,
        rsv1: Bool = false,
        maskingKey: UInt32? = nil,
        to buffer: inout [UInt8]
    ) {
        let header = frameHeader(
            opcode: opcode, payloadCount: payload.count, fin: fin, rsv1: rsv1, maskingKey: maskingKey)
        // Encoded on the stack, then appended in one piece: no per-byte appends.
        var headerStorage: (UInt64, UInt64) = (0, 0)
        let headerCount = withUnsafeMutableBytes(of: &headerStorage) { header.encode(into: $0.baseAddress!) }
        withUnsafeBytes(of: headerStorage) {
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<headerCount]))
        }

        guard !payload.isEmpty else { return }
        let payloadStart = buffer.count
        buffer.append(contentsOf: payload)
        if let maskingKey {
            buffer.withUnsafeMutableBytes { bytes in
                let masked = bytes.baseAddress! + payloadStart
                WebSocketMasking.apply(
                    maskingKey: maskingKey, keyOffset: 0, from: masked, to: masked, count: payload.count)
            }
        }
    }

    public static func append(
        opcode: WebSocketOpcode,
        payload: [UInt8],
        fin: Bool = true,
        rsv1: Bool = false,
        maskingKey: UInt32? = nil,
        to buffer: inout [UInt8]
    ) {
        payload.withUnsafeBytes { payload in
            append(opcode: opcode, payload: payload, fin: fin, rsv1: rsv1, maskingKey: maskingKey, to: &buffer)
        }
    }

    /// One frame in an array of exactly its size.
    public static func frame(
        opcode: WebSocketOpcode,
        payload: [UInt8],
        fin: Bool = true,
        rsv1: Bool = false,
        maskingKey: UInt32? = nil
    ) -> [UInt8] {
        let header = frameHeader(
            opcode: opcode, payloadCount: payload.count, fin: fin, rsv1: rsv1, maskingKey: maskingKey)
        var frame: [UInt8] = []
        frame.reserveCapacity(header.encodedByteCount + payload.count)
        append(opcode: opcode, payload: payload, fin: fin, rsv1: rsv1, maskingKey: maskingKey, to: &frame)
        return frame
    }

    /// Close-frame body (RFC 6455 §5.5.1): the 2-byte code, then as much of `reason` as fits in
    /// 125 bytes, cut between characters so the peer still sees valid UTF-8.
    public static func closePayload(code: WebSocketCloseCode, reason: String) -> [UInt8] {
        var body: [UInt8] = [UInt8(truncatingIfNeeded: code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)]
        let reasonBytes = Array(reason.utf8)
        var reasonCount = min(reasonBytes.count, maximumControlPayload - 2)
        // A String is valid UTF-8, so the first byte that is not a continuation (10xxxxxx) starts a character.
        while reasonCount < reasonBytes.count, reasonCount > 0, reasonBytes[reasonCount] & 0xC0 == 0x80 {
            reasonCount -= 1
        }
        body.append(contentsOf: reasonBytes[..<reasonCount])
        return body
    }

    /// RFC 6455 §5.5: every control frame payload fits a 7-bit length.
    private static let maximumControlPayload = 125

    private static func frameHeader(
        opcode: WebSocketOpcode, payloadCount: Int, fin: Bool, rsv1: Bool, maskingKey: UInt32?
    ) -> WebSocketFrameHeader {
        precondition(
            !opcode.isControl || (fin && payloadCount <= maximumControlPayload),
            "control frames must be final and carry at most 125 bytes")
        return WebSocketFrameHeader(
            fin: fin, rsv1: rsv1, opcodeBits: opcode.rawValue, maskingKey: maskingKey,
            payloadLength: UInt64(payloadCount))
    }

    /// Where the frame that covers byte `offset` ends, in a buffer of whole frames written by
    /// this writer starting at `start`. A sender that must stop early (a slow consumer being
    /// closed) cuts its queue there: the frame already leaving is finished, the rest dropped.
    public static func endOfFrame(covering offset: Int, in frames: [UInt8], from start: Int) -> Int {
        frames.withUnsafeBytes { bytes in
            var boundary = start
            while boundary < offset, boundary + 2 <= bytes.count {
                let headerLength = WebSocketFrameHeader.byteCount(secondByte: bytes[boundary + 1])
                guard boundary + headerLength <= bytes.count else { return bytes.count }
                let header = WebSocketFrameHeader(decoding: UnsafeRawBufferPointer(rebasing: bytes[boundary...]))
                boundary += headerLength + Int(header.payloadLength)
            }
            return min(boundary, bytes.count)
        }
    }
}
