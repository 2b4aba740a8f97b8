import HuddleIO
import HuddleWebSocket

/// Frames out: masked with a fresh key each, compressed when permessage-deflate was agreed,
/// queued in the transport until the end of the loop turn.
extension WebSocketClientConnection {
    func send(_ opcode: WebSocketOpcode, _ payload: [UInt8]) -> Bool {
        guard state == .open, queuedByteCount < options.maxOutboundBytes, let context else { return false }
        let maskingKey = context.nextMaskingKey()
        if let compression, payload.count >= PerMessageDeflater.minimumCompressibleSize {
            let deflater: PerMessageDeflater
            if compression.clientNoContextTakeover {
                deflater = context.sharedDeflater(windowBits: compression.clientMaxWindowBits)
            } else {
                if privateDeflater == nil {
                    privateDeflater = PerMessageDeflater(windowBits: compression.clientMaxWindowBits, noContextTakeover: false)
                }
                deflater = privateDeflater!
            }
            let compressed = deflater.compress(payload)
            // Without context takeover the server's inflater keeps nothing of this message, so
            // an incompressible payload (already compressed media, random bytes) may go as is.
            if compression.clientNoContextTakeover && compressed.count >= payload.count {
                transport?.appendToQueue { WebSocketFrameWriter.append(opcode: opcode, payload: payload, maskingKey: maskingKey, to: &$0) }
            } else {
                transport?.appendToQueue {
                    WebSocketFrameWriter.append(opcode: opcode, payload: compressed, rsv1: true, maskingKey: maskingKey, to: &$0)
                }
            }
        } else {
            transport?.appendToQueue { WebSocketFrameWriter.append(opcode: opcode, payload: payload, maskingKey: maskingKey, to: &$0) }
        }
        context.markDirty(self)
        return true
    }

    func enqueueFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        guard let context, let transport else { return }
        let maskingKey = context.nextMaskingKey()
        transport.appendToQueue { WebSocketFrameWriter.append(opcode: opcode, payload: payload, maskingKey: maskingKey, to: &$0) }
        context.markDirty(self)
    }

    func enqueue(_ bytes: [UInt8]) {
        transport?.enqueue(bytes)
        context?.markDirty(self)
    }
}
