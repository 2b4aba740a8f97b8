import HuddleWebSocket

/// One outgoing message encoded once for every recipient: the plain frame, and — when some
/// recipient negotiated permessage-deflate without server context takeover — the compressed
/// frame. Recipients copy these bytes into their write queues; nothing is re-encoded per socket.
struct SharedFrame: Sendable {
    let plain: [UInt8]
    /// Compressed with a 15-bit window and no context, so any recipient that agreed to
    /// `server_no_context_takeover` with a 15-bit window can take it as is.
    let deflated: [UInt8]?

    init(opcode: WebSocketOpcode, payload: [UInt8], deflater: PerMessageDeflater?) {
        plain = WebSocketFrameWriter.frame(opcode: opcode, payload: payload)
        if let deflater, payload.count >= PerMessageDeflater.minimumCompressibleSize {
            deflated = WebSocketFrameWriter.frame(opcode: opcode, payload: deflater.compress(payload), rsv1: true)
        } else {
            deflated = nil
        }
    }
}
