import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// The Huddle protocol (protocol.md) over one `WebSocketClientConnection`: requests with ids,
/// replies matched back to their callbacks, everything else delivered as events. Confined to
/// the connection's loop and callback-based, so one loop thread can drive thousands of them
/// (the load-test harness does).
public final class ProtocolSession: ClientConnectionDelegate {
    public private(set) var connection: WebSocketClientConnection!
    public var onOpen: (() -> Void)?
    /// Every message that is not a reply (events), parsed.
    public var onEvent: ((JSONValue) -> Void)?
    public var onClose: ((WebSocketCloseCode?, String) -> Void)?
    private var pending: [String: (JSONValue) -> Void] = [:]
    private var nextID: UInt64 = 0

    public init(url: ClientURL, loop: EventLoop, options: ClientConnectionOptions) {
        var options = options
        if !options.subprotocols.contains("huddle.v1") { options.subprotocols.append("huddle.v1") }
        connection = WebSocketClientConnection(url: url, loop: loop, options: options, delegate: self)
    }

    public func connect() { connection.connect() }

    /// Sends `op` with `fields`; `reply` gets the whole reply object (`ok`, `result` or `error`).
    @discardableResult
    public func request(_ op: String, _ fields: [(String, JSONValue)] = [], reply: @escaping (JSONValue) -> Void) -> Bool {
        nextID += 1
        let id = String(nextID)
        var message: [UInt8] = []
        JSONWriter.append(.object([("id", .string(id)), ("op", .string(op))] + fields), to: &message)
        guard connection.send(text: message) else { return false }
        pending[id] = reply
        return true
    }

    public var pendingRequests: Int { pending.count }

    public func close() { connection.close() }

    // MARK: ClientConnectionDelegate

    public func webSocketDidOpen(_ connection: WebSocketClientConnection, subprotocol: String?, extensions: [String]) {
        onOpen?()
    }

    public func webSocket(_ connection: WebSocketClientConnection, didReceive event: WebSocketEvent) {
        guard case .text(let bytes) = event, let message = try? JSONParser.parse(bytes, maxDepth: 64) else { return }
        if let id = message["id"]?.stringValue, let reply = pending.removeValue(forKey: id) {
            reply(message)
        } else {
            onEvent?(message)
        }
    }

    public func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool) {
        pending.removeAll()
        onClose?(code, reason)
    }
}
