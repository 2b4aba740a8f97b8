import HuddleWebSocket

/// What runs behind a WebSocket path. One instance per I/O loop, so an endpoint's state is
/// confined to that loop's thread like the connections it serves.
protocol WebSocketEndpoint: AnyObject {
    /// Largest message (after reassembly and inflation) a client may send here.
    var maxMessageSize: Int { get }
    /// Decides the upgrade once the handshake itself is valid: which subprotocol to answer
    /// with, or a refusal.
    func accept(_ request: WebSocketHandshake.Request) -> EndpointAcceptance
    func connectionOpened(_ connection: Connection, request: WebSocketHandshake.Request)
    /// A complete data message: `opcode` is `.text` (UTF-8 already validated) or `.binary`.
    func received(_ opcode: WebSocketOpcode, _ payload: [UInt8], from connection: Connection)
    /// The same, for a message still in the loop's read buffer (valid only during the call).
    /// Endpoints that answer from those bytes (echo) implement it; the rest get an array.
    func received(_ message: WebSocketBorrowedMessage, from connection: Connection)
    func connectionClosed(_ connection: Connection)
    /// Requests read from `connection` and not answered yet: shutdown closes the connection
    /// (1001) once there are none.
    func requestsUnanswered(_ connection: Connection) -> Int
    /// The connection's `isBehind` changed: publishers to it should wait, or may go on
    /// (protocol.md, "Backpressure"). A connection closed while behind is only `connectionClosed`.
    func connectionBehindChanged(_ connection: Connection)
}

enum EndpointAcceptance {
    case accept(subprotocol: String?)
    case reject(status: Int, reason: String)
}

extension WebSocketEndpoint {
    /// Raw endpoints speak no subprotocol and take any client.
    func accept(_ request: WebSocketHandshake.Request) -> EndpointAcceptance { .accept(subprotocol: nil) }
    func received(_ message: WebSocketBorrowedMessage, from connection: Connection) {
        received(message.opcode, Array(message.payload), from: connection)
    }

    /// Raw endpoints answer (echo, fan out) as they read.
    func requestsUnanswered(_ connection: Connection) -> Int { 0 }

    /// Endpoints without publishers (`/echo`) have nobody to hold back.
    func connectionBehindChanged(_ connection: Connection) {}
}
