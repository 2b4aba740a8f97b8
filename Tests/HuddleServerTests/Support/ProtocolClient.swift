import Foundation
import HuddleWebSocket

typealias JSONObject = [String: Any]

/// A blocking test client for the `/v1` JSON protocol (protocol.md) on top of `RawClient`:
/// requests with automatic ids, replies matched by id, and events buffered in arrival order so a
/// test can read them after the reply that raced them. It parses with Foundation on purpose:
/// an independent JSON implementation checks the server's own encoder.
final class ProtocolClient {
    /// How the connection presents a session token on the upgrade request.
    enum Credential {
        case none
        case header(String)
        case subprotocol(String)
    }

    /// The server closed the connection (`code` nil: no close frame before EOF).
    struct Closed: Error, CustomStringConvertible {
        var code: WebSocketCloseCode?
        var description: String { "connection closed by the server (code \(code.map(String.init(describing:)) ?? "none"))" }
    }

    let raw: RawClient
    let upgradeResponse: RawClient.Response
    private var counter = 0
    private var events: [JSONObject] = []
    private var replies: [JSONObject] = []
    /// Set once the server's close frame (or EOF) has been read.
    private(set) var closed: Closed?

    /// Connects to `/v1`. With `subprotocols` containing `huddle.v1` the answer must be exactly
    /// `huddle.v1`: the server never echoes a `huddle.auth.*` token (protocol.md, "Authentication").
    init(
        port: Int, credential: Credential = .none, subprotocols: [String]? = ["huddle.v1"],
        extraHeaders: [String] = [], receiveTimeout: Double = 5, receiveBufferSize: Int32? = nil, sourceAddress: String? = nil
    ) throws {
        raw = try RawClient(port: port, receiveTimeout: receiveTimeout, receiveBufferSize: receiveBufferSize, sourceAddress: sourceAddress)
        var headers = extraHeaders
        var offered = subprotocols ?? []
        switch credential {
        case .none: break
        case .header(let token): headers.append("Authorization: Bearer \(token)")
        case .subprotocol(let token): offered.append("huddle.auth.\(token)")
        }
        if !offered.isEmpty { headers.append("Sec-WebSocket-Protocol: \(offered.joined(separator: ", "))") }
        upgradeResponse = try raw.upgrade(path: "/v1", extraHeaders: headers)
        let answered = upgradeResponse.headers["sec-websocket-protocol"]
        if offered.contains("huddle.v1") {
            guard answered == "huddle.v1" else {
                throw TestFailure("offered \(offered), server answered subprotocol \(answered ?? "none")")
            }
        }
    }

    /// The subprotocol the server selected, if any.
    var subprotocol: String? { upgradeResponse.headers["sec-websocket-protocol"] }

    // MARK: Sending

    func sendText(_ text: String) throws {
        try raw.sendFrame(.text, Array(text.utf8))
    }

    func send(_ object: JSONObject) throws {
        try sendText(JSON.text(object))
    }

    /// Sends `{"id": <next>, "op": op, ...fields}` without waiting; returns the id used.
    @discardableResult
    func sendRequest(_ op: String, _ fields: JSONObject = [:]) throws -> String {
        counter += 1
        let id = String(counter)
        var object = fields
        object["id"] = id
        object["op"] = op
        try send(object)
        return id
    }

    /// One request and its reply (the whole reply object, `ok` true or false).
    func request(_ op: String, _ fields: JSONObject = [:]) throws -> JSONObject {
        let id = try sendRequest(op, fields)
        return try reply(to: id)
    }

    /// Sends every request in one write, without reading anything; returns their ids.
    func sendBatch(_ requests: [(String, JSONObject)]) throws -> [String] {
        var batch: [UInt8] = []
        var ids: [String] = []
        for (op, fields) in requests {
            counter += 1
            let id = String(counter)
            var object = fields
            object["id"] = id
            object["op"] = op
            batch += WebSocketFrameWriter.frame(
                opcode: .text, payload: Array(JSON.text(object).utf8), maskingKey: UInt32.random(in: 0...UInt32.max))
            ids.append(id)
        }
        try raw.send(batch)
        return ids
    }

    /// Sends every request before reading any reply (no round trip each), then returns the
    /// replies in request order.
    func pipeline(_ requests: [(String, JSONObject)]) throws -> [JSONObject] {
        try sendBatch(requests).map { try reply(to: $0) }
    }

    /// Reads the replies to `requests` (sent with ids `ids`) and sends again, after the
    /// `retry_after_ms` the server asked for, those refused `busy` or `rate_limited` (they
    /// stored nothing), until every one succeeded. Any other failure throws.
    func settle(_ ids: [String], _ requests: [(String, JSONObject)]) throws {
        var ids = ids, requests = requests
        let giveUp = Date().addingTimeInterval(60)
        while !ids.isEmpty {
            guard Date() < giveUp else { throw TestFailure("\(ids.count) requests still refused after 60 s") }
            var again: [(String, JSONObject)] = []
            var wait = 0
            for (id, request) in zip(ids, requests) {
                let reply = try reply(to: id)
                if JSON.bool(reply["ok"]) == true { continue }
                let error = reply["error"] as? JSONObject
                guard let code = error?["code"] as? String, code == "busy" || code == "rate_limited" else {
                    throw TestFailure("\(request.0) failed: \(JSON.text(reply))")
                }
                wait = max(wait, JSON.int(error?["retry_after_ms"]) ?? 0)
                again.append(request)
            }
            guard !again.isEmpty else { return }
            usleep(useconds_t(wait) * 1000)  // the pause the server asked for
            ids = try sendBatch(again)
            requests = again
        }
    }

    /// The result of a request that must succeed.
    @discardableResult
    func ok(_ op: String, _ fields: JSONObject = [:]) throws -> JSONObject {
        let answer = try request(op, fields)
        guard JSON.bool(answer["ok"]) == true, let result = answer["result"] as? JSONObject else {
            throw TestFailure("\(op) \(JSON.text(fields)) failed: \(JSON.text(answer))")
        }
        return result
    }

    /// The `error` object of a request that must fail.
    func failure(_ op: String, _ fields: JSONObject = [:]) throws -> JSONObject {
        let answer = try request(op, fields)
        guard JSON.bool(answer["ok"]) == false, let error = answer["error"] as? JSONObject else {
            throw TestFailure("\(op) \(JSON.text(fields)) was expected to fail: \(JSON.text(answer))")
        }
        return error
    }

    /// The error code of a request that must fail.
    func errorCode(_ op: String, _ fields: JSONObject = [:]) throws -> String? {
        try failure(op, fields)["code"] as? String
    }

    // MARK: Receiving

    /// The reply carrying `id`. Events that arrive first are kept for `nextEvent`; a reply with
    /// another id is an error (replies come in request order and this client waits for each).
    func reply(to id: String) throws -> JSONObject {
        let answer = try nextReply()
        guard answer["id"] as? String == id else {
            throw TestFailure("expected the reply to \(id), got \(JSON.text(answer))")
        }
        return answer
    }

    /// The next reply of any id (including `"id": null`), buffering events.
    func nextReply() throws -> JSONObject {
        if !replies.isEmpty { return replies.removeFirst() }
        while true {
            let message = try readMessage()
            if message["event"] != nil && message["id"] == nil {
                events.append(message)
            } else {
                return message
            }
        }
    }

    /// The next event (buffered first). Throws if none arrives within `timeout` seconds.
    func nextEvent(timeout: Double = 5) throws -> JSONObject {
        if !events.isEmpty { return events.removeFirst() }
        raw.setReceiveTimeout(timeout)
        defer { raw.setReceiveTimeout(5) }
        while true {
            let message = try readMessage()
            if message["event"] != nil && message["id"] == nil { return message }
            replies.append(message)
        }
    }

    /// The next event of kind `kind`, skipping nothing: another kind is an error.
    func nextEvent(_ kind: String, timeout: Double = 5) throws -> JSONObject {
        let event = try nextEvent(timeout: timeout)
        guard event["event"] as? String == kind else {
            throw TestFailure("expected a \(kind) event, got \(JSON.text(event))")
        }
        return event
    }

    /// The next `count` publication events.
    func publications(_ count: Int, timeout: Double = 5) throws -> [JSONObject] {
        try (0..<count).map { _ in try nextEvent("publication", timeout: timeout) }
    }

    /// Nil when no event arrives within `seconds`; otherwise the event (which is consumed).
    /// The events the core sent this connection so far, taken off the buffer. A barrier, not a
    /// wait: the core answers `whoami` in a turn after every earlier one, and the loop sends that
    /// turn's batch after theirs on the same socket, so every event an earlier request (of any
    /// connection) caused has arrived before the reply. Proves "no event" without a sleep.
    func eventsBeforeBarrier() throws -> [JSONObject] {
        _ = try request("whoami")
        defer { events = [] }
        return events
    }

    func eventIfAny(within seconds: Double) throws -> JSONObject? {
        if !events.isEmpty { return events.removeFirst() }
        do {
            return try nextEvent(timeout: seconds)
        } catch let failure as TestFailure where failure.description.contains("timed out") {
            return nil
        }
    }

    /// Reads until the server's close frame; returns its code. Messages read meanwhile are kept.
    func closeCode(timeout: Double = 5) throws -> WebSocketCloseCode? {
        raw.setReceiveTimeout(timeout)
        defer { raw.setReceiveTimeout(5) }
        while true {
            do {
                let message = try readMessage()
                if message["event"] != nil && message["id"] == nil { events.append(message) } else { replies.append(message) }
            } catch let closed as Closed {
                return closed.code
            }
        }
    }

    /// The next text message as a JSON object, answering pings on the way.
    func readMessage() throws -> JSONObject {
        if let closed { throw closed }
        while true {
            guard let event = try raw.nextEvent() else {
                closed = Closed(code: nil)
                throw closed!
            }
            switch event {
            case .text(let bytes):
                guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? JSONObject else {
                    throw TestFailure("server sent a text message that is not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
                }
                return object
            case .binary(let bytes):
                throw TestFailure("server sent a binary message of \(bytes.count) bytes")
            case .ping(let payload):
                try raw.sendFrame(.pong, payload)
            case .pong:
                continue
            case .close(let code, _):
                closed = Closed(code: code ?? .noStatusReceived)
                throw closed!
            }
        }
    }

    // MARK: Accounts

    /// Signs up `name` (email `name@example.com`, password `password`); returns the token.
    @discardableResult
    func signup(_ name: String, password: String = ProtocolClient.password, email: String? = nil) throws -> String {
        let result = try ok("signup", ["username": name, "email": email ?? "\(name)@example.com", "password": password])
        guard let token = result["token"] as? String else { throw TestFailure("signup gave no token: \(JSON.text(result))") }
        return token
    }

    @discardableResult
    func login(_ login: String, password: String = ProtocolClient.password) throws -> String {
        let result = try ok("login", ["login": login, "password": password])
        guard let token = result["token"] as? String else { throw TestFailure("login gave no token: \(JSON.text(result))") }
        return token
    }

    @discardableResult
    func auth(_ token: String) throws -> JSONObject {
        try ok("auth", ["token": token])
    }

    static let password = "correct horse battery"

    // MARK: Channels

    @discardableResult
    func subscribe(_ channel: String, since: (epoch: String, offset: Int)? = nil) throws -> JSONObject {
        var fields: JSONObject = ["channel": channel]
        if let since { fields["since"] = ["epoch": since.epoch, "offset": since.offset] }
        return try ok("subscribe", fields)
    }

    @discardableResult
    func publish(_ channel: String, _ data: Any, type: String? = nil) throws -> JSONObject {
        var fields: JSONObject = ["channel": channel, "data": data]
        if let type { fields["type"] = type }
        return try ok("publish", fields)
    }

    /// Publishes each of `datas` in one pipeline; returns the offsets.
    func publishAll(_ channel: String, _ datas: [Any]) throws -> [Int] {
        let replies = try pipeline(datas.map { ("publish", ["channel": channel, "data": $0]) })
        return try replies.map { reply in
            guard JSON.bool(reply["ok"]) == true, let offset = JSON.int((reply["result"] as? JSONObject)?["offset"]) else {
                throw TestFailure("pipelined publish failed: \(JSON.text(reply))")
            }
            return offset
        }
    }

    // MARK: Convenience
    /// Publishes `count` publications (data `{"n": first + i}`) as `token`'s user, spread over
    /// fresh connections so no connection goes past its burst of 100 requests; returns the offsets.
    /// The user's own budget (`--user-rate-limit`, bursts of twice as many) must allow `count`.
    static func flood(_ channel: String, count: Int, first: Int = 1, token: String, port: Int) throws -> [Int] {
        let perConnection = 90
        var offsets: [Int] = []
        var next = first
        while offsets.count < count {
            let client = try ProtocolClient(port: port, credential: .header(token))
            let n = min(perConnection, count - offsets.count)
            offsets += try client.publishAll(channel, (next..<next + n).map { ["n": $0] })
            next += n
        }
        return offsets
    }


    /// A new connection signed up as `name`, with its token.
    @discardableResult
    static func signedUp(_ name: String, port: Int) throws -> (ProtocolClient, String) {
        let client = try ProtocolClient(port: port)
        let token = try client.signup(name)
        return (client, token)
    }

    /// A connection signed in with `token` and subscribed to `channel`, with a tiny receive
    /// buffer: once it stops reading, the server's writes to it back up at once.
    static func slowSubscriber(_ channel: String, token: String, port: Int) throws -> ProtocolClient {
        let client = try ProtocolClient(port: port, credential: .header(token), receiveTimeout: 20, receiveBufferSize: 4096)
        _ = try client.nextEvent("session")
        try client.subscribe(channel)
        return client
    }

    /// A new connection authenticated with `token` through the `auth` op.
    @discardableResult
    static func authenticated(_ token: String, port: Int) throws -> ProtocolClient {
        let client = try ProtocolClient(port: port)
        try client.auth(token)
        return client
    }
}

/// Small JSON helpers that keep Foundation's bridging honest: a JSON `true` is not the number 1.
enum JSON {
    static func text(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject([value]),
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        else { return String(describing: value) }
        return String(decoding: data, as: UTF8.self)
    }

    static func parse(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    static func isBool(_ value: Any?) -> Bool {
        guard let value else { return false }
        return String(describing: type(of: value)).contains("Boolean")
    }

    /// The value only if it is a JSON boolean.
    static func bool(_ value: Any?) -> Bool? {
        isBool(value) ? value as? Bool : nil
    }

    /// The value only if it is a JSON integer (not a boolean, no fraction).
    static func int(_ value: Any?) -> Int? {
        guard let value, !isBool(value), let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        guard double == double.rounded(), let int = value as? Int else { return nil }
        return int
    }

    static func isNull(_ value: Any?) -> Bool { value is NSNull }

    /// Milliseconds since the Unix epoch, now.
    static var nowMilliseconds: Int { Int(Date().timeIntervalSince1970 * 1000) }
}

/// Starts `huddle` for protocol tests: fast password hashing (1000 PBKDF2 iterations instead of
/// 600 000) so a signup costs microseconds, never seconds, and no fsync per core turn unless a
/// test is about durability (the disk is shared by every test running at once).
func startHuddle(_ arguments: [String] = [], dataDirectory: URL? = nil, fsync: String = "no") async throws -> ServerProcess {
    try await ServerProcess(["--kdf-iterations", "1000", "--fsync", fsync] + arguments, dataDirectory: dataDirectory)
}
