import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// One HTTP/1.1 request on its own connection; the response with its body parsed as JSON when
/// it is JSON.
struct HTTPExchange {
    var status: Int
    var headers: [String: String]
    var body: String
    var json: JSONObject? { try? JSON.parse(body) as? JSONObject }
    var errorCode: String? { (json?["error"] as? JSONObject)?["code"] as? String }

    init(port: Int, _ method: String, _ target: String, body: String? = nil, key: String? = nil, headers extra: [String] = []) throws {
        let client = try RawClient(port: port)
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if let key { head += "Authorization: Bearer \(key)\r\n" }
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        for header in extra { head += header + "\r\n" }
        // A server may answer (413, 401) and close before it reads a large body: the response
        // still arrives, so a failed send of the rest is not the test's concern.
        try? client.send(head + "\r\n" + (body ?? ""))
        // Read to the end of the body by Content-Length, else to EOF (we asked for
        // Connection: close), so a body without Content-Length or a chunked one is read too.
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                bytes += buffer[0..<count]
                if Self.isComplete(bytes) { break }
                continue
            }
            if count == 0 || errno == ECONNRESET { break }
            throw TestFailure("HTTP \(method) \(target): recv failed (errno \(errno)) after \(bytes.count) bytes")
        }
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            throw TestFailure("HTTP \(method) \(target): no response head in \(bytes.count) bytes")
        }
        var lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var payload = Array(bytes[end.upperBound...])
        if let length = headers["content-length"].flatMap(Int.init) {
            payload = Array(payload.prefix(length))
        } else if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            payload = Self.dechunk(payload)
        }
        status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        self.headers = headers
        self.body = String(decoding: payload, as: UTF8.self)
    }

    private static func isComplete(_ bytes: [UInt8]) -> Bool {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return false }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
        guard let line = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return bytes.count - end.upperBound >= length
    }

    private static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var rest = bytes[...]
        while let lineEnd = rest.firstRange(of: Array("\r\n".utf8)),
            let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? "", radix: 16),
            size > 0
        {
            rest = rest[lineEnd.upperBound...]
            output += rest.prefix(size)
            rest = rest.dropFirst(size + 2)
        }
        return output
    }
}

/// protocol.md "HTTP API": the server-side API for an application's own backend.
@Suite(.ownThread) struct HTTPAPITests {
    static let key = "test-api-key-0123456789"

    static func start() async throws -> ServerProcess {
        try await startHuddle(["--api-key", key])
    }

    @Test func publishToAnInboxReachesItsOwnerFromTheServer() async throws {
        let server = try await Self.start()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        #expect(try alice.subscribe("inbox:alice")["epoch"] as? String == "", "no publication yet")
        let before = JSON.nowMilliseconds
        let response = try HTTPExchange(
            port: server.port, "POST", "/api/v1/publish", body: #"{"channel": "inbox:alice", "data": {"text": "welcome"}, "type": "notice"}"#, key: Self.key)
        #expect(response.status == 200, "\(response.body)")
        #expect(response.headers["content-type"]?.hasPrefix("application/json") == true)
        let result = try #require(response.json, "\(response.body)")
        let epoch = try #require(result["epoch"] as? String)
        #expect(!epoch.isEmpty)
        #expect(JSON.int(result["offset"]) == 1)
        #expect((JSON.int(result["time"]) ?? 0) >= before - 1000)
        let event = try alice.nextEvent("publication")
        #expect(event["channel"] as? String == "inbox:alice")
        #expect(event["epoch"] as? String == epoch)
        #expect(JSON.int(event["offset"]) == 1)
        #expect(event["type"] as? String == "notice")
        #expect(JSON.isNull(event["from"]), "\(JSON.text(event))")
        #expect(JSON.text(event["data"] ?? 0) == #"{"text":"welcome"}"#)
        // Kept in the inbox's history, still from the server.
        let history = try alice.ok("history", ["channel": "inbox:alice"])
        let kept = try #require((history["publications"] as? [JSONObject])?.first)
        #expect(JSON.isNull(kept["from"]))
        #expect(kept["type"] as? String == "notice")
    }

    @Test func publishWithoutTypeIsAMessageAndWorksOnAnyChannel() async throws {
        let server = try await Self.start()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try ProtocolClient.signedUp("bob", port: server.port)
        for channel in ["room:lobby", "chat:alice~bob", "loc:alice"] {
            try alice.subscribe(channel)
            let response = try HTTPExchange(port: server.port, "POST", "/api/v1/publish", body: #"{"channel": "\#(channel)", "data": 7}"#, key: Self.key)
            #expect(response.status == 200, "\(channel): \(response.body)")
            let event = try alice.nextEvent("publication")
            #expect(event["channel"] as? String == channel)
            #expect(event["type"] as? String == "message")
            #expect(JSON.isNull(event["from"]))
            #expect(JSON.int(event["data"]) == 7)
        }
    }

    @Test func historyByQuery() async throws {
        let server = try await Self.start()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        _ = try alice.publishAll("room:lobby", (1...45).map { $0 })
        let response = try HTTPExchange(port: server.port, "GET", "/api/v1/history?channel=room:lobby&before=40&limit=20", key: Self.key)
        #expect(response.status == 200, "\(response.body)")
        let result = try #require(response.json, "\(response.body)")
        #expect(result["channel"] as? String == "room:lobby")
        #expect(JSON.int(result["offset"]) == 45)
        #expect(result["epoch"] is String)
        let publications = try #require(result["publications"] as? [JSONObject])
        #expect(publications.compactMap { JSON.int($0["offset"]) } == Array((20...39).reversed()))
        #expect(publications.allSatisfy { $0["from"] as? String == "alice" })
        #expect(JSON.int(result["next_before"]) == 20)
        let encoded = try HTTPExchange(port: server.port, "GET", "/api/v1/history?channel=room%3Alobby&limit=5", key: Self.key)
        #expect(encoded.status == 200, "percent-encoded query: \(encoded.body)")
        #expect((encoded.json?["publications"] as? [JSONObject])?.compactMap { JSON.int($0["offset"]) } == [45, 44, 43, 42, 41])
        let end = try HTTPExchange(port: server.port, "GET", "/api/v1/history?channel=room:lobby&before=3", key: Self.key)
        #expect((end.json?["publications"] as? [JSONObject])?.compactMap { JSON.int($0["offset"]) } == [2, 1])
        #expect(JSON.isNull(end.json?["next_before"]), "\(end.body)")
    }

    @Test func historyOfAnyChannelIncludingPrivateOnes() async throws {
        let server = try await Self.start()
        try ProtocolClient.signedUp("alice", port: server.port)
        let published = try HTTPExchange(port: server.port, "POST", "/api/v1/publish", body: #"{"channel":"inbox:alice","data":"x"}"#, key: Self.key)
        #expect(published.status == 200)
        let response = try HTTPExchange(port: server.port, "GET", "/api/v1/history?channel=inbox:alice", key: Self.key)
        #expect(response.status == 200, "\(response.body)")
        #expect((response.json?["publications"] as? [Any])?.count == 1)
    }

    @Test func disconnectClosesEveryConnectionOfTheUserWith4001() async throws {
        let server = try await Self.start()
        let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let phone = try ProtocolClient(port: server.port, credential: .header(token))
        _ = try phone.nextEvent("session")
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        let response = try HTTPExchange(port: server.port, "POST", "/api/v1/disconnect", body: #"{"user": "alice"}"#, key: Self.key)
        #expect(response.status == 200, "\(response.body)")
        #expect(JSON.int(response.json?["closed"]) == 2, "\(response.body)")
        #expect(try alice.closeCode() == WebSocketCloseCode(rawValue: 4001))
        #expect(try phone.closeCode() == WebSocketCloseCode(rawValue: 4001))
        #expect(try bob.ok("ping")["time"] != nil)
        // Sessions stay valid: the user comes straight back.
        let back = try ProtocolClient.authenticated(token, port: server.port)
        #expect((try back.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "alice")
        let again = try HTTPExchange(port: server.port, "POST", "/api/v1/disconnect", body: #"{"user": "alice"}"#, key: Self.key)
        #expect(JSON.int(again.json?["closed"]) == 1, "\(again.body)")
        #expect(try back.closeCode() == WebSocketCloseCode(rawValue: 4001))
        // A known user without connections: nothing to close.
        let idle = try HTTPExchange(port: server.port, "POST", "/api/v1/disconnect", body: #"{"user": "alice"}"#, key: Self.key)
        #expect(idle.status == 200 && JSON.int(idle.json?["closed"]) == 0, "\(idle.status) \(idle.body)")
        let nobody = try HTTPExchange(port: server.port, "POST", "/api/v1/disconnect", body: #"{"user": "carol"}"#, key: Self.key)
        #expect(nobody.status == 400 && nobody.errorCode == "bad_request", "an unknown user: \(nobody.status) \(nobody.body)")
    }

    @Test(arguments: [nil, "wrong-key", "test-api-key-012345678", "test-api-key-0123456789x"])
    func missingOrWrongKeyIs401(key: String?) async throws {
        let server = try await Self.start()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("inbox:alice")
        for (method, path, body) in [
            ("POST", "/api/v1/publish", #"{"channel":"inbox:alice","data":1}"#), ("GET", "/api/v1/history?channel=inbox:alice", nil),
            ("POST", "/api/v1/disconnect", #"{"user":"alice"}"#),
        ] {
            let response = try HTTPExchange(port: server.port, method, path, body: body, key: key)
            #expect(response.status == 401, "\(method) \(path) with key \(key ?? "none"): \(response.status)")
            #expect(response.errorCode != nil, "a JSON error object: \(response.body)")
        }
        #expect(try alice.eventIfAny(within: 0.2) == nil, "nothing was published")
        #expect(try alice.ok("ping")["time"] != nil, "nobody was disconnected")
    }

    @Test func keyInAnotherSchemeIs401() async throws {
        let server = try await Self.start()
        let response = try HTTPExchange(port: server.port, "GET", "/api/v1/history?channel=room:x", headers: ["Authorization: Basic \(Self.key)"])
        #expect(response.status == 401)
    }

    @Test func apiIs404WithoutAKey() async throws {
        let server = try await startHuddle()
        for (method, path, body) in [
            ("POST", "/api/v1/publish", #"{"channel":"room:x","data":1}"#), ("GET", "/api/v1/history?channel=room:x", nil),
            ("POST", "/api/v1/disconnect", #"{"user":"alice"}"#),
        ] {
            let response = try HTTPExchange(port: server.port, method, path, body: body, key: Self.key)
            #expect(response.status == 404, "\(method) \(path): \(response.status)")
        }
    }

    @Test func unknownPathIs404AndWrongMethodIs405() async throws {
        let server = try await Self.start()
        #expect(try HTTPExchange(port: server.port, "GET", "/api/v1/nothing", key: Self.key).status == 404)
        #expect(try HTTPExchange(port: server.port, "GET", "/api/v1/publish", key: Self.key).status == 405)
        #expect(try HTTPExchange(port: server.port, "POST", "/api/v1/history?channel=room:x", body: "{}", key: Self.key).status == 405)
        #expect(try HTTPExchange(port: server.port, "DELETE", "/api/v1/disconnect", key: Self.key).status == 405)
    }

    @Test(arguments: [
        ("not json", "bad_json"), ("[1]", "bad_json"), (#"{"data": 1}"#, "bad_request"), (#"{"channel": "room:x"}"#, "bad_request"),
        (#"{"channel": 5, "data": 1}"#, "bad_request"), (#"{"channel": "nowhere", "data": 1}"#, "invalid_channel"),
        (#"{"channel": "chat:bob~alice", "data": 1}"#, "invalid_channel"), (#"{"channel": "room:x", "data": 1, "type": "Bad Type"}"#, "bad_request"),
    ])
    func badPublishBodyIs400(body: String, code: String) async throws {
        let server = try await Self.start()
        let response = try HTTPExchange(port: server.port, "POST", "/api/v1/publish", body: body, key: Self.key)
        #expect(response.status == 400, "\(body): \(response.status) \(response.body)")
        #expect(response.errorCode == code, "\(body): \(response.body)")
        #expect((response.json?["error"] as? JSONObject)?["message"] is String)
    }

    @Test(arguments: [("not json", "bad_json"), ("{}", "bad_request"), (#"{"user": 5}"#, "bad_request")])
    func badDisconnectBodyIs400(body: String, code: String) async throws {
        let server = try await Self.start()
        let response = try HTTPExchange(port: server.port, "POST", "/api/v1/disconnect", body: body, key: Self.key)
        #expect(response.status == 400, "\(body): \(response.status) \(response.body)")
        #expect(response.errorCode == code, "\(body): \(response.body)")
    }

    @Test(arguments: ["/api/v1/history", "/api/v1/history?channel=nowhere", "/api/v1/history?channel=room:x&limit=ten", "/api/v1/history?channel=room:x&before=x"])
    func badHistoryQueryIs400(target: String) async throws {
        let server = try await Self.start()
        let response = try HTTPExchange(port: server.port, "GET", target, key: Self.key)
        #expect(response.status == 400, "\(target): \(response.status) \(response.body)")
        #expect(response.errorCode != nil, "\(response.body)")
    }

    @Test func bodyOver64KiBIs413() async throws {
        let server = try await Self.start()
        let body = #"{"channel":"room:x","data":""# + String(repeating: "a", count: 70_000) + "\"}"
        let response = try HTTPExchange(port: server.port, "POST", "/api/v1/publish", body: body, key: Self.key)
        #expect(response.status == 413, "\(response.status) \(response.body)")
        let history = try HTTPExchange(port: server.port, "GET", "/api/v1/history?channel=room:x", key: Self.key)
        #expect(JSON.int(history.json?["offset"]) == 0, "nothing was published: \(history.body)")
    }

    @Test func dataOver16KiBIsPayloadTooLarge() async throws {
        let server = try await Self.start()
        let body = #"{"channel":"room:x","data":""# + String(repeating: "a", count: 20_000) + "\"}"
        let response = try HTTPExchange(port: server.port, "POST", "/api/v1/publish", body: body, key: Self.key)
        #expect(response.status == 400 || response.status == 413, "\(response.status)")
        #expect(response.errorCode == "payload_too_large", "\(response.body)")
    }

    @Test func healthzAndMetricsNeedNoKey() async throws {
        let server = try await Self.start()
        let health = try HTTPExchange(port: server.port, "GET", "/healthz")
        #expect(health.status == 200 && health.body == "ok\n")
        #expect(try HTTPExchange(port: server.port, "GET", "/metrics").status == 200)
    }
}
