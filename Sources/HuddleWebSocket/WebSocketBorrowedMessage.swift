/// A whole data message still in the read buffer it arrived in: one final, uncompressed frame,
/// already unmasked in place and (text) validated. `WebSocketMessageReader.read(inPlace:message:_:)`
/// hands it over without copying it anywhere.
///
/// Borrowed: the memory is the reader's caller's buffer, valid only while the callback that
/// received the message runs. Keep nothing of it; copy what must outlive the call.
public struct WebSocketBorrowedMessage {
    public let opcode: WebSocketOpcode
    private let payloadStart: UnsafeMutableRawPointer
    private let payloadCount: Int
    /// The received frame's header bytes, in front of the payload: consumed, so the message may
    /// overwrite them with the header of its own frame (`framedInPlace`).
    private let headroom: Int

    init(opcode: WebSocketOpcode, payloadStart: UnsafeMutableRawPointer, payloadCount: Int, headroom: Int) {
        self.opcode = opcode
        self.payloadStart = payloadStart
        self.payloadCount = payloadCount
        self.headroom = headroom
    }

    /// The unmasked payload.
    public var payload: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: payloadStart, count: payloadCount) }

    /// The message as an unmasked frame to send (a server's echo): its header is written into
    /// the received header's bytes just in front of the payload, and the returned bytes are the
    /// whole frame, header and payload contiguous, ready for one copy into a write queue.
    ///
    /// Always fits: the received header used the same length form for the same payload length,
    /// and (from a client) also carried a 4-byte masking key that ours does not.
    public func framedInPlace() -> UnsafeRawBufferPointer {
        let header = WebSocketFrameHeader(
            fin: true, rsv1: false, opcodeBits: opcode.rawValue, maskingKey: nil, payloadLength: UInt64(payloadCount))
        let headerCount = header.encodedByteCount
        precondition(headerCount <= headroom, "a frame header longer than the one it replaces")
        let start = payloadStart - headerCount
        _ = header.encode(into: start)
        return UnsafeRawBufferPointer(start: start, count: headerCount + payloadCount)
    }
}
