/// A frame opcode (RFC 6455 §5.2). Reserved opcodes (3–7, 11–15) are not representable:
/// the decoder rejects them with 1002 before an opcode value is built.
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Which end of the connection a codec serves: a server reads masked frames and writes
/// unmasked ones; a client the reverse.
public enum WebSocketRole: Sendable {
    case server
    case client
}
