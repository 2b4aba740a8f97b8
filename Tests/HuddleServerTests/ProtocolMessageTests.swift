import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// protocol.md "Connecting", "Messages" and the general errors: the envelope every op shares.
@Suite(.ownThread) struct ProtocolMessageTests {
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

    /// Messages of 128 bytes and more come compressed (RSV1), smaller ones plain; both read back
    /// to the same JSON. Frames are read straight off the socket to see the RSV1 bit.
    @Test func repliesOver128BytesAreCompressedAndSmallerOnesAreNot() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port, extraHeaders: ["Sec-WebSocket-Extensions: permessage-deflate"])
        #expect(client.upgradeResponse.headers["sec-websocket-extensions"]?.hasPrefix("permessage-deflate") == true)
        let frames = RawFrames(fd: client.raw.fd)
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: true)
        try client.sendRequest("ping")
        let small = try frames.next()
        #expect(small.header == 0x81, "a short reply is a plain text frame: \(String(small.header, radix: 16))")
        #expect(small.payload.count < 128)
        try client.sendRequest("signup", ["username": "alice", "email": "alice@example.com", "password": ProtocolClient.password, "device": String(repeating: "d", count: 60)])
        let large = try frames.next()
        #expect(large.header == 0xC1, "a reply of 128 bytes or more is compressed: \(String(large.header, radix: 16))")
        let text = try inflater.inflate(large.payload, maxSize: 1 << 20)
        let reply = try #require(try JSON.parse(String(decoding: text, as: UTF8.self)) as? JSONObject)
        #expect(text.count >= 128)
        #expect(JSON.bool(reply["ok"]) == true && reply["id"] as? String == "2", "\(String(decoding: text, as: UTF8.self))")
    }

    @Test func compressedMessageInflatingPast64KiBClosesWith1009() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port, extraHeaders: ["Sec-WebSocket-Extensions: permessage-deflate"])
        let text = #"{"id":"1","op":"ping","pad":""# + String(repeating: " ", count: 70_000) + "\"}"
        let deflated = PerMessageDeflater(windowBits: 15, noContextTakeover: true).compress(Array(text.utf8))
        #expect(deflated.count < 2000)
        try client.raw.sendFrame(.text, deflated, rsv1: true)
        #expect(try client.closeCode() == .messageTooBig)
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

    @Test(arguments: ["7", "ü✓ with spaces", String(repeating: "i", count: 64), String(repeating: "é", count: 64), "1"])
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

    /// Replies keep request order even when the requests take different paths through the
    /// server (a ping needs no state, a signup hashes a password, a bad message is refused early).
    @Test func repliesKeepRequestOrderAcrossEveryKindOfRequest() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let texts = [
            #"{"id":"1","op":"signup","username":"alice","email":"a@example.com","password":"correct horse"}"#,
            #"{"id":"2","op":"ping"}"#, "not json", #"{"id":"4","op":"nope"}"#, #"{"id":"5","op":"subscribe","channel":"room:x"}"#,
            #"{"id":"6","op":"ping"}"#, #"{"id":"7"}"#, #"{"id":"8","op":"history","channel":"room:x"}"#,
        ]
        var batch: [UInt8] = []
        for text in texts {
            batch += WebSocketFrameWriter.frame(opcode: .text, payload: Array(text.utf8), maskingKey: 0x1234_5678)
        }
        try client.raw.send(batch)
        var ids: [String?] = []
        for _ in texts { ids.append(try client.nextReply()["id"] as? String) }
        #expect(ids == ["1", "2", nil, "4", "5", "6", "7", "8"])
    }

    /// A request pipelined right after `signup` or `login` runs in the session they open: replies
    /// come in request order, so the request is handled after the sign-in.
    @Test(arguments: ["signup", "login"])
    func requestsPipelinedAfterSignInRunSignedIn(op: String) async throws {
        let server = try await startHuddle()
        if op == "login" { try ProtocolClient(port: server.port).signup("alice") }
        let client = try ProtocolClient(port: server.port)
        let signIn: JSONObject = op == "signup"
            ? ["username": "alice", "email": "alice@example.com", "password": ProtocolClient.password]
            : ["login": "alice", "password": ProtocolClient.password]
        let replies = try client.pipeline([(op, signIn), ("whoami", [:]), ("subscribe", ["channel": "room:x"])])
        #expect(replies.map { JSON.bool($0["ok"]) } == [true, true, true], "\(replies.map { JSON.text($0) })")
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

/// Server frames read straight off a socket (server frames are never masked), so a test can see
/// the header bits a message reader hides.
final class RawFrames {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    func next() throws -> (header: UInt8, payload: [UInt8]) {
        while true {
            if buffer.count >= 2 {
                var length = Int(buffer[1] & 0x7F)
                var start = 2
                if length == 126, buffer.count >= 4 {
                    length = Int(buffer[2]) << 8 | Int(buffer[3])
                    start = 4
                } else if length == 127, buffer.count >= 10 {
                    length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
                    start = 10
                }
                if length < 126 || start > 2, buffer.count >= start + length {
                    let frame = (buffer[0], Array(buffer[start..<start + length]))
                    buffer.removeFirst(start + length)
                    return frame
                }
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw TestFailure("no frame: recv returned \(count), errno \(errno)") }
            buffer += chunk[0..<count]
        }
    }
}
