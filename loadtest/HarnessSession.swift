import HuddleClient
import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// The Huddle protocol over one `WebSocketClientConnection`, as the scenarios use it: requests
/// with ids and their replies matched back, as HuddleClient's `ProtocolSession` does, plus a
/// fast path for `publication` events (`PublicationScanner`), which a scenario receives by the
/// hundred thousand per second and needs only three numbers of. Other events are parsed whole.
final class HarnessSession: ClientConnectionDelegate {
    private(set) var connection: WebSocketClientConnection!
    /// The loop the connection runs on (callbacks come on it; retries are scheduled on it).
    let loop: EventLoop
    var onOpen: (() -> Void)?
    /// A publication event whose `data` is a harness stamp.
    var onPublication: ((PublicationScanner.Fields) -> Void)?
    /// Every other message that is not a reply, parsed.
    var onEvent: ((JSONValue) -> Void)?
    /// The close code (nil when it never opened) and the reason. Requests still waiting for a
    /// reply are dropped unanswered.
    var onClose: ((WebSocketCloseCode?, String) -> Void)?
    private var pending: [String: (JSONValue) -> Void] = [:]
    private var nextID: UInt64 = 0

    init(url: ClientURL, loop: EventLoop, options: ClientConnectionOptions) {
        var options = options
        if !options.subprotocols.contains("huddle.v1") { options.subprotocols.append("huddle.v1") }
        self.loop = loop
        connection = WebSocketClientConnection(url: url, loop: loop, options: options, delegate: self)
    }

    func connect() { connection.connect() }

    func close() { connection.close() }

    /// Closes the socket at once, without a close handshake (a lost network).
    func abort() { connection.abort() }

    /// Sends `op` with `fields`; `reply` gets the whole reply object (`ok`, `result` or `error`).
    /// False when the connection is not open or its outbound queue is full.
    @discardableResult
    func request(_ op: String, _ fields: [(String, JSONValue)] = [], reply: @escaping (JSONValue) -> Void) -> Bool {
        nextID += 1
        let id = String(nextID)
        var message: [UInt8] = []
        JSONWriter.append(.object([("id", .string(id)), ("op", .string(op))] + fields), to: &message)
        guard connection.send(text: message) else { return false }
        pending[id] = reply
        return true
    }

    // MARK: ClientConnectionDelegate

    func webSocketDidOpen(_ connection: WebSocketClientConnection, subprotocol: String?, extensions: [String]) {
        onOpen?()
    }

    func webSocket(_ connection: WebSocketClientConnection, didReceive event: WebSocketEvent) {
        guard case .text(let bytes) = event else { return }
        if let onPublication, let fields = PublicationScanner.scan(bytes) {
            return onPublication(fields)
        }
        guard let message = try? JSONParser.parse(bytes, maxDepth: 64) else { return }
        if let id = message["id"]?.stringValue, let reply = pending.removeValue(forKey: id) {
            reply(message)
        } else if let onPublication, message["event"]?.stringValue == "publication", let data = message["data"], let stamp = Stamp(json: data) {
            // A stamped publication the scanner did not recognize (keys in another order).
            onPublication(.init(epoch: message["epoch"]?.stringValue ?? "", offset: message["offset"]?.uint64Value ?? 0, stamp: stamp))
        } else {
            onEvent?(message)
        }
    }

    func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool) {
        pending.removeAll()
        onClose?(code, reason)
    }
}
