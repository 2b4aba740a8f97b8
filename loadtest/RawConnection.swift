import HuddleClient
import HuddleProtocol
import HuddleIO
import HuddleWebSocket

/// A plain WebSocket connection for the raw `echo` and `broadcast` modes, which drive any
/// server's endpoints: no Huddle protocol, just text messages in and out through closures.
final class RawConnection: ClientConnectionDelegate {
    private(set) var connection: WebSocketClientConnection!
    var onOpen: (() -> Void)?
    var onText: (([UInt8]) -> Void)?
    /// The close code (nil when it never opened) and the reason.
    var onClose: ((WebSocketCloseCode?, String) -> Void)?

    init(url: ClientURL, loop: EventLoop, options: ClientConnectionOptions) {
        connection = WebSocketClientConnection(url: url, loop: loop, options: options, delegate: self)
    }

    func connect() { connection.connect() }

    @discardableResult
    func send(_ text: [UInt8]) -> Bool { connection.send(text: text) }

    func close() { connection.close() }

    func webSocketDidOpen(_ connection: WebSocketClientConnection, subprotocol: String?, extensions: [String]) {
        onOpen?()
    }

    func webSocket(_ connection: WebSocketClientConnection, didReceive event: WebSocketEvent) {
        if case .text(let bytes) = event { onText?(bytes) }
    }

    func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool) {
        onClose?(code, reason)
    }
}
