import HuddleWebSocket

/// What a `WebSocketClientConnection` tells its owner. Every call happens on the connection's
/// event-loop thread; a delegate may call back into the connection (send, close) from any of them.
public protocol ClientConnectionDelegate: AnyObject {
    /// The upgrade succeeded: `subprotocol` is the one the server chose (nil when none), and
    /// `extensions` the accepted `Sec-WebSocket-Extensions` elements with their parameters.
    func webSocketDidOpen(_ connection: WebSocketClientConnection, subprotocol: String?, extensions: [String])

    /// A whole text or binary message, or a pong. Pings are answered automatically and close
    /// frames end in `webSocketDidClose`, so neither arrives here.
    func webSocket(_ connection: WebSocketClientConnection, didReceive event: WebSocketEvent)

    /// Called exactly once per connection that was connected or closed, whatever happened, after
    /// which the connection holds no socket and has released its delegate.
    ///
    /// - `code`: nil when the connection never opened (refused TCP, TLS failure, an upgrade the
    ///   server refused — the HTTP status is in `reason` and `handshakeStatus` — or a timeout);
    ///   otherwise the code of the server's close frame (1005 when it had none), the code we
    ///   failed the connection with, or 1006 when the TCP connection ended without a close frame.
    /// - `clean`: both close frames were exchanged (RFC 6455 §7.1.4 "closed cleanly").
    func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool)
}
