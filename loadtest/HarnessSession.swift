import HuddleClient
import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// The Huddle protocol over one `WebSocketClientConnection`, as the scenarios use it: requests
/// with ids and their replies matched back, read by the wire model (HuddleProtocol), plus a
/// fast path for `publication` events (`PublicationScanner`), which a scenario receives by the
/// hundred thousand per second and needs only three numbers of. Other events are parsed whole.
final class HarnessSession: ClientConnectionDelegate {
    private(set) var connection: WebSocketClientConnection!
    /// The loop the connection runs on (callbacks come on it; retries are scheduled on it).
    let loop: EventLoop
    var onOpen: (() -> Void)?
    /// A publication event whose `data` is a harness stamp.
    var onPublication: ((PublicationScanner.Fields) -> Void)?
    /// Every other event this version reads, typed.
    var onEvent: ((ServerEvent) -> Void)?
    /// The close code (nil when it never opened) and the reason. Requests still waiting for a
    /// reply are dropped unanswered.
    var onClose: ((WebSocketCloseCode?, String) -> Void)?
    private var pending: [String: (ServerReply) -> Void] = [:]
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

    /// Sends `operation`, written by the protocol's encoder as a client sends it; `reply` gets
    /// the reply, read by the wire model. False when the connection is not open or its outbound
    /// queue is full.
    @discardableResult
    func request(_ operation: Operation, reply: @escaping (ServerReply) -> Void) -> Bool {
        nextID += 1
        let id = String(nextID)
        let message = RequestEncoder.encode(ClientRequest(id: id, operation: operation), omittingDefaults: true)
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
        if let reply = try? ServerReply(json: message), let id = reply.id, let callback = pending.removeValue(forKey: id) {
            callback(reply)
        } else if let event = try? ServerEvent(json: message) {
            if let onPublication, case .publication(let publication) = event, let stamp = Stamp(json: publication.data) {
                // A stamped publication the scanner did not recognize (keys in another order).
                onPublication(.init(epoch: publication.epoch, offset: publication.offset, stamp: stamp))
            } else {
                onEvent?(event)
            }
        }
    }

    func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool) {
        pending.removeAll()
        onClose?(code, reason)
    }
}

extension Operation {
    /// A harness publication: a stamp as `data`, no `client_id` (nothing is retried).
    static func publish(_ channel: String, stamp: JSONValue) -> Operation {
        .publish(channel: channel, type: RequestDefaults.publicationType, data: JSONWriter.serialize(stamp))
    }
}

extension ServerReply {
    /// The result of a successful reply; nil for a refusal.
    var result: JSONValue? {
        if case .success(let result) = outcome { return result }
        return nil
    }

    var error: ReplyError? {
        if case .failure(let error) = outcome { return error }
        return nil
    }

    /// The reply as it came, for a log line.
    var text: String { String(decoding: message, as: UTF8.self) }
}
