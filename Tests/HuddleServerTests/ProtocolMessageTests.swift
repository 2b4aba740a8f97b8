import Foundation
import HuddleWebSocket
import Testing

/// protocol.md "Connecting", "Messages" and the general errors: the envelope every op shares.
@Suite struct ProtocolMessageTests {
    // MARK: Connecting

    @Test func huddleV1IsSelectedAmongOfferedSubprotocols() async throws {
        let server = try await startHuddle()
        let plain = try ProtocolClient(port: server.port)
        #expect(plain.subprotocol == "huddle.v1")
        let among = try ProtocolClient(port: server.port, subprotocols: ["chat", "huddle.v1", "superchat"])
        #expect(among.subprotocol == "huddle.v1")
        #expect(try among.ok("ping")["time"] != nil)
    }

    @Test func offeringNoSubprotocolIsAllowed() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port, subprotocols: nil)
        #expect(client.subprotocol == nil, "RFC 6455 §4.2.2: no Sec-WebSocket-Protocol when none was offered")
        #expect(try client.ok("ping")["time"] != nil)
    }

    @Test(arguments: ["chat", "huddle.v2", "chat, superchat", "huddle.auth.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])
    func subprotocolsWithoutHuddleV1Are400(offer: String) async throws {
        let server = try await startHuddle()
        let client = try RawClient(port: server.port)
        try client.send(
            "GET /v1 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: \(offer)\r\n\r\n")
        #expect(try client.readResponse().status == 400, "\(offer)")
        #expect(client.waitForEOF())
    }

    @Test func compressionIsNegotiatedWithoutContextTakeoverBothWays() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port, extraHeaders: ["Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"])
        let accepted = try #require(client.upgradeResponse.headers["sec-websocket-extensions"])
        let parameters = accepted.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(parameters.first == "permessage-deflate")
        #expect(parameters.contains("server_no_context_takeover"), "\(accepted)")
        #expect(parameters.contains("client_no_context_takeover"), "\(accepted)")
        // A small request compressed by us; the reply is under 128 bytes, so it comes back plain.
        let deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: true)
        try client.raw.sendFrame(.text, deflater.compress(Array(#"{"id":"z","op":"ping"}"#.utf8)), rsv1: true)
        let reply = try client.nextReply()
        #expect(reply["id"] as? String == "z")
        #expect(JSON.int((reply["result"] as? JSONObject)?["time"]) != nil)
    }

    // MARK: Messages

    @Test func pingReturnsTheServerClock() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let before = JSON.nowMilliseconds
        let reply = try client.request("ping")
        #expect(JSON.bool(reply["ok"]) == true)
        let time = try #require(JSON.int((reply["result"] as? JSONObject)?["time"]), "\(JSON.text(reply))")
        #expect(time >= before - 1000 && time <= JSON.nowMilliseconds + 1000, "time \(time), now \(before)")
    }

    @Test(arguments: ["7", "ü✓ with spaces", String(repeating: "i", count: 64), "1"])
    func replyEchoesTheIDExactly(id: String) async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        try client.send(["id": id, "op": "ping"])
        #expect(try client.nextReply()["id"] as? String == id)
    }

    @Test func repliesComeInRequestOrderAndDuplicateIDsAreAnswered() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        try client.signup("alice")
        let requests: [JSONObject] = [
            ["id": "a", "op": "ping"], ["id": "b", "op": "whoami"], ["id": "c", "op": "nope"],
            ["id": "a", "op": "subscribe", "channel": "room:x"], ["id": "e", "op": "publish", "channel": "room:x", "data": 1],
            ["id": "f", "op": "history", "channel": "room:x"], ["id": "a", "op": "ping"],
        ]
        for request in requests { try client.send(request) }
        var replies: [JSONObject] = []
        for _ in requests { replies.append(try client.nextReply()) }
        #expect(replies.map { $0["id"] as? String } == ["a", "b", "c", "a", "e", "f", "a"])
        #expect(replies.map { JSON.bool($0["ok"]) } == [true, true, false, true, true, true, true])
    }

    @Test func unknownFieldsAreIgnored() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        #expect(try client.ok("ping", ["future": ["nested": [1, 2, 3]], "flag": true])["time"] != nil)
        try client.ok("signup", ["username": "alice", "email": "a@example.com", "password": ProtocolClient.password, "avatar": "x"])
        try client.ok("subscribe", ["channel": "room:x", "priority": 5])
    }

    @Test func eventsHaveNoIDAndRepliesHaveOk() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("room:x")
        try alice.send(["id": "p", "op": "publish", "channel": "room:x", "data": "hi"])
        var messages: [JSONObject] = []
        for _ in 0..<2 { messages.append(try alice.readMessage()) }
        let reply = try #require(messages.first { $0["id"] != nil })
        let event = try #require(messages.first { $0["event"] != nil })
        #expect(reply["id"] as? String == "p" && JSON.bool(reply["ok"]) == true && reply["event"] == nil)
        #expect(event["id"] == nil && event["ok"] == nil && event["event"] as? String == "publication")
        #expect(JSON.int(event["time"]) != nil)
    }

    // MARK: General errors

    @Test(arguments: [
        "not json", "[1, 2]", "\"a string\"", "42", "null", "true", "{\"id\": \"1\", \"op\": \"ping\",}",
        "{\"id\": \"1\"", "{'id': '1', 'op': 'ping'}", "", "{\"id\": \"1\", \"op\": \"ping\"} {}",
    ])
    func notAJSONObjectIsBadJSONWithNullID(text: String) async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        try client.sendText(text)
        let reply = try client.nextReply()
        #expect(JSON.isNull(reply["id"]), "\(text): \(JSON.text(reply))")
        #expect(JSON.bool(reply["ok"]) == false)
        #expect((reply["error"] as? JSONObject)?["code"] as? String == "bad_json", "\(text): \(JSON.text(reply))")
        #expect((reply["error"] as? JSONObject)?["message"] is String)
        #expect(try client.ok("ping")["time"] != nil, "the connection stays open")
    }

    @Test(arguments: [
        #"{"op": "ping"}"#, #"{"id": 7, "op": "ping"}"#, #"{"id": null, "op": "ping"}"#, #"{"id": ["1"], "op": "ping"}"#,
    ])
    func noStringIDIsBadRequestWithNullID(text: String) async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        try client.sendText(text)
        let reply = try client.nextReply()
        #expect(JSON.isNull(reply["id"]), "\(text): \(JSON.text(reply))")
        #expect((reply["error"] as? JSONObject)?["code"] as? String == "bad_request", "\(text): \(JSON.text(reply))")
    }

    @Test(arguments: ["", String(repeating: "i", count: 65)])
    func idOutOfLengthIsBadRequest(id: String) async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        try client.send(["id": id, "op": "ping"])
        let reply = try client.nextReply()
        #expect(JSON.bool(reply["ok"]) == false)
        #expect((reply["error"] as? JSONObject)?["code"] as? String == "bad_request", "\(JSON.text(reply))")
    }

    @Test func missingOrMistypedOpIsBadRequest() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        for request in [["id": "1"], ["id": "2", "op": 5], ["id": "3", "op": ["ping"]], ["id": "4", "op": NSNull()]] as [JSONObject] {
            try client.send(request)
            let reply = try client.nextReply()
            #expect(reply["id"] as? String == request["id"] as? String, "the id is readable, so the reply carries it")
            #expect((reply["error"] as? JSONObject)?["code"] as? String == "bad_request", "\(JSON.text(request)): \(JSON.text(reply))")
        }
    }

    @Test func unknownOp() async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        for op in ["frobnicate", "PING", "", "Subscribe"] {
            let reply = try client.request(op)
            #expect((reply["error"] as? JSONObject)?["code"] as? String == "unknown_op", "\(op): \(JSON.text(reply))")
        }
    }

    /// A missing or mistyped argument is `bad_request` and the message names the argument.
    @Test(arguments: [
        ("signup", ["email": "a@example.com", "password": "password123"], "username"),
        ("signup", ["username": "alice", "password": "password123"], "email"),
        ("signup", ["username": "alice", "email": "a@example.com"], "password"),
        ("signup", ["username": 5, "email": "a@example.com", "password": "password123"], "username"),
        ("signup", ["username": "alice", "email": "a@example.com", "password": "password123", "device": 5], "device"),
        ("login", ["password": "password123"], "login"),
        ("login", ["login": "alice", "password": 12345678], "password"),
        ("auth", [:], "token"),
        ("auth", ["token": 5], "token"),
    ] as [(String, [String: any Sendable], String)])
    func anonymousArgumentErrorsNameTheArgument(op: String, fields: [String: any Sendable], argument: String) async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let error = try client.failure(op, fields.mapValues { $0 as Any })
        #expect(error["code"] as? String == "bad_request", "\(op) \(fields)")
        #expect((error["message"] as? String ?? "").contains(argument), "\(op): \(error["message"] ?? "")")
    }

    @Test(arguments: [
        ("subscribe", [:], "channel"),
        ("subscribe", ["channel": 5], "channel"),
        ("unsubscribe", [:], "channel"),
        ("publish", ["channel": "room:x"], "data"),
        ("publish", ["data": "x"], "channel"),
        ("publish", ["channel": "room:x", "data": "x", "type": 5], "type"),
        ("history", ["channel": ["room:x"]], "channel"),
        ("history", ["channel": "room:x", "before": "10"], "before"),
        ("history", ["channel": "room:x", "limit": "10"], "limit"),
        ("history", ["channel": "room:x", "limit": 2.5], "limit"),
        ("presence", [:], "channel"),
        ("logout", ["all": "yes"], "all"),
    ] as [(String, [String: any Sendable], String)])
    func argumentErrorsNameTheArgument(op: String, fields: [String: any Sendable], argument: String) async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let error = try client.failure(op, fields.mapValues { $0 as Any })
        #expect(error["code"] as? String == "bad_request", "\(op) \(fields): \(JSON.text(error))")
        #expect((error["message"] as? String ?? "").contains(argument), "\(op): \(error["message"] ?? "")")
        #expect(try client.ok("whoami")["user"] != nil, "still signed in")
    }

    @Test func errorRepliesHaveCodeAndMessage() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let reply = try client.request("whoami")
        #expect(JSON.bool(reply["ok"]) == false)
        #expect(reply["result"] == nil)
        let error = try #require(reply["error"] as? JSONObject)
        #expect(error["code"] as? String == "not_authenticated")
        #expect(!((error["message"] as? String) ?? "").isEmpty)
    }
}
