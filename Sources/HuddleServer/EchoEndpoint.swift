import HuddleWebSocket

/// `/echo` (with --bench): every message straight back, text as text and binary as binary.
/// The conformance suite and round-trip benchmarks drive the transport through it.
final class EchoEndpoint: WebSocketEndpoint {
    let maxMessageSize: Int

    init(maxMessageSize: Int) { self.maxMessageSize = maxMessageSize }

    func connectionOpened(_ connection: Connection, request: WebSocketHandshake.Request) {}

    func received(_ opcode: WebSocketOpcode, _ payload: [UInt8], from connection: Connection) {
        connection.send(opcode, payload)
    }

    /// A whole message in one read (the usual case) goes back without being copied out first.
    func received(_ message: WebSocketBorrowedMessage, from connection: Connection) {
        connection.sendBack(message)
    }

    func connectionClosed(_ connection: Connection) {}
}
