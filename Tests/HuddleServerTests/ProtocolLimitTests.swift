import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// protocol.md "Limits", "Close codes" and "Timing": every limit at its boundary and just past it.
@Suite(.ownThread) struct ProtocolLimitTests {
    /// `{"id":"d","op":"publish","channel":"room:deep","data":[[…]]}` nested `depth` levels in
    /// all, counting the top-level object as 1.
    static func nested(depth: Int) -> String {
        let arrays = depth - 1
        return #"{"id":"d","op":"publish","channel":"room:deep","data":"# + String(repeating: "[", count: arrays)
            + String(repeating: "]", count: arrays) + "}"
    }

    @Test func nestingOf32IsAcceptedAnd33IsTooDeep() async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try client.sendText(Self.nested(depth: 32))
        let accepted = try client.nextReply()
        #expect(JSON.bool(accepted["ok"]) == true, "\(JSON.text(accepted))")
        try client.sendText(Self.nested(depth: 33))
        let refused = try client.nextReply()
        #expect((refused["error"] as? JSONObject)?["code"] as? String == "too_deep", "\(JSON.text(refused))")
        // Depth counts anywhere in the message, not just in data.
        try client.sendText(#"{"id":"x","op":"ping","extra":"# + String(repeating: "{\"a\":", count: 32) + "1" + String(repeating: "}", count: 32) + "}")
        #expect((try client.nextReply()["error"] as? JSONObject)?["code"] as? String == "too_deep")
        #expect(JSON.int(try client.ok("history", ["channel": "room:deep"])["offset"]) == 1, "the refused message published nothing")
    }

    @Test func absurdNestingIsRefusedWithoutHarm() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        try client.sendText(#"{"id":"1","op":"ping","x":"# + String(repeating: "[", count: 60_000))
        let reply = try client.nextReply()
        let code = (reply["error"] as? JSONObject)?["code"] as? String
        #expect(code == "too_deep" || code == "bad_json", "\(JSON.text(reply))")
        #expect(try client.ok("ping")["time"] != nil)
    }

    @Test func dataOf16KiBIsAcceptedAndOneByteMoreIsTooLarge() async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try client.subscribe("room:big")
        // A string of n ASCII letters serializes to n + 2 bytes.
        let fits = String(repeating: "a", count: 16 * 1024 - 2)
        #expect(JSON.int(try client.publish("room:big", fits)["offset"]) == 1)
        #expect(try client.nextEvent("publication")["data"] as? String == fits)
        let error = try client.failure("publish", ["channel": "room:big", "data": fits + "a"])
        #expect(error["code"] as? String == "payload_too_large")
        let object = ["blob": String(repeating: "b", count: 17 * 1024)]
        #expect(try client.errorCode("publish", ["channel": "room:big", "data": object]) == "payload_too_large")
        #expect(try client.eventIfAny(within: 0.2) == nil)
        #expect(JSON.int(try client.ok("history", ["channel": "room:big"])["offset"]) == 1)
    }

    @Test func dataSizeIsMeasuredCompactlySerialized() async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        // 16 380 letters in an array: 16 384 bytes compact, but padded with 20 000 spaces on the wire.
        let padded = #"{"id":"s","op":"publish","channel":"room:big","data":[ "# + String(repeating: " ", count: 20_000)
            + "\"" + String(repeating: "a", count: 16 * 1024 - 4) + "\"  ]}"
        try client.sendText(padded)
        let reply = try client.nextReply()
        #expect(JSON.bool(reply["ok"]) == true, "\(JSON.text(reply))")
    }

    @Test func messageOver64KiBClosesWith1009() async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        // Exactly 64 KiB is still read (and refused politely: its data is too large).
        let prefix = #"{"id":"max","op":"publish","channel":"room:x","data":""#
        let exact = prefix + String(repeating: "a", count: 65536 - prefix.utf8.count - 2) + "\"}"
        #expect(exact.utf8.count == 65536)
        try client.sendText(exact)
        #expect((try client.nextReply()["error"] as? JSONObject)?["code"] as? String == "payload_too_large")
        try client.sendText(exact.replacingOccurrences(of: "\"data\":\"", with: "\"data\":\"a"))
        #expect(try client.closeCode() == .messageTooBig)
        #expect(client.raw.waitForEOF())
    }

    @Test func fragmentedMessageOver64KiBClosesWith1009() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        try client.raw.sendFrame(.text, [UInt8](repeating: 0x20, count: 40_000), fin: false)
        try client.raw.sendFrame(.continuation, [UInt8](repeating: 0x20, count: 40_000))
        #expect(try client.closeCode() == .messageTooBig)
    }

    @Test func fragmentedRequestIsOneMessage() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        try client.raw.sendFrame(.text, Array(#"{"id":"frag","#.utf8), fin: false)
        try client.raw.sendFrame(.continuation, Array(#""op":"ping"}"#.utf8))
        let reply = try client.nextReply()
        #expect(reply["id"] as? String == "frag" && JSON.bool(reply["ok"]) == true)
    }

    @Test func binaryFrameClosesWith1003() async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try client.raw.sendFrame(.binary, Array(#"{"id":"1","op":"ping"}"#.utf8))
        #expect(try client.closeCode() == .unsupportedData)
        #expect(client.raw.waitForEOF())
    }

    @Test func invalidUTF8ClosesWith1007() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        try client.raw.sendFrame(.text, Array(#"{"id":"1","op":"ping","x":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8))
        #expect(try client.closeCode() == .invalidPayloadData)
    }

    @Test func burstOf100ThenRateLimitedWithRetryAfter() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let replies = try client.pipeline(Array(repeating: ("ping", [:]), count: 130))
        #expect(replies.prefix(100).allSatisfy { JSON.bool($0["ok"]) == true }, "the burst of 100 is allowed")
        let limited = replies.dropFirst(100).filter { ($0["error"] as? JSONObject)?["code"] as? String == "rate_limited" }
        // 50 per second refill: at most a couple of tokens come back while 30 requests arrive.
        #expect(limited.count >= 25, "\(limited.count) of the 30 past the burst were limited")
        for reply in limited {
            let retry = JSON.int((reply["error"] as? JSONObject)?["retry_after_ms"])
            #expect(retry != nil && retry! > 0 && retry! <= 1000, "\(JSON.text(reply))")
        }
        // After the advised wait, requests go through again.
        let wait = limited.compactMap { JSON.int(($0["error"] as? JSONObject)?["retry_after_ms"]) }.max() ?? 100
        try await Task.sleep(for: .milliseconds(wait + 20))
        #expect(try client.ok("ping")["time"] != nil)
    }

    @Test func rateRefillsAtFiftyPerSecond() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let burst = try client.pipeline(Array(repeating: ("ping", [:]), count: 100))
        #expect(burst.allSatisfy { JSON.bool($0["ok"]) == true })
        let emptied = Date()
        try await Task.sleep(for: .milliseconds(500))
        // The sleep may overrun on a busy machine: measure how long the bucket really refilled.
        let elapsed = Date().timeIntervalSince(emptied)
        let replies = try client.pipeline(Array(repeating: ("ping", [:]), count: 100))
        let allowed = replies.filter { JSON.bool($0["ok"]) == true }.count
        let expected = min(100, Int(elapsed * 50))
        #expect(allowed >= expected - 3 && allowed <= min(100, expected + 10), "\(allowed) allowed after \(elapsed) s")
        #expect(allowed < 100 || elapsed >= 1.9)
    }

    @Test func aThousandRefusalsInARowCloseWith1008() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port, receiveTimeout: 10)
        // Far more than 100 + 1000 requests in one write, so refills cannot break the streak
        // for long: the server reads them back to back.
        _ = try client.sendBatch(Array(repeating: ("ping", [:]), count: 3000))
        #expect(try client.closeCode(timeout: 10) == .policyViolation)
    }

    @Test func tooManySubscriptions() async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let first = try client.pipeline((1...90).map { ("subscribe", ["channel": "room:r\($0)"]) })
        #expect(first.allSatisfy { JSON.bool($0["ok"]) == true })
        try await Task.sleep(for: .milliseconds(600))  // stay under the request rate
        let rest = try client.pipeline((91...100).map { ("subscribe", ["channel": "room:r\($0)"]) })
        #expect(rest.allSatisfy { JSON.bool($0["ok"]) == true }, "100 subscriptions are allowed")
        #expect(try client.errorCode("subscribe", ["channel": "room:r101"]) == "too_many_subscriptions")
        try client.subscribe("room:r1")  // already subscribed: not a new subscription
        try client.ok("unsubscribe", ["channel": "room:r50"])
        try client.subscribe("room:r101")
        #expect(try client.errorCode("subscribe", ["channel": "inbox:alice"]) == "too_many_subscriptions")
        // The limit is per connection.
        let (other, _) = try ProtocolClient.signedUp("bob", port: server.port)
        try other.subscribe("room:r1")
    }

    /// A subscriber that stops reading is closed with 1008 once its queue passes the ceiling, and
    /// the channel goes on for everyone else (publishes refused `busy` meanwhile are sent again).
    @Test func slowSubscriberIsClosedWith1008() async throws {
        // One user publishes it all: their share of bytes published is raised to let 8 MiB through at once.
        let server = try await startHuddle(["--max-outbound-bytes", "65536", "--user-publish-bytes", "4194304"])
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let slow = try ProtocolClient.slowSubscriber("room:flood", token: token, port: server.port)
        // 8 MiB of publications, over the socket buffers and the 64 KiB queue; the slow client
        // reads nothing meanwhile. Each publisher stays within its burst.
        let chunk = String(repeating: "x", count: 16_000)
        for _ in 0..<6 {
            let publisher = try ProtocolClient(port: server.port, credential: .header(token))
            let requests: [(String, JSONObject)] = Array(repeating: ("publish", ["channel": "room:flood", "data": chunk]), count: 90)
            try publisher.settle(try publisher.sendBatch(requests), requests)
        }
        try await server.waitForLog("closing slow consumer", timeout: 10)
        #expect(try slow.closeCode(timeout: 20) == .policyViolation)
        let (reader, _) = try ProtocolClient.signedUp("bob", port: server.port)
        #expect(JSON.int(try reader.subscribe("room:flood")["offset"]) == 540)
        try reader.publish("room:flood", "after")
        #expect(try reader.nextEvent("publication")["data"] as? String == "after")
    }

    @Test func silentConnectionIsPingedThenClosedWith1008() async throws {
        let server = try await startHuddle(["--ping-interval", "1", "--idle-timeout", "3"])
        let client = try ProtocolClient(port: server.port, receiveTimeout: 6)
        let started = Date()
        #expect(try client.raw.nextEvent() == .ping([]))
        #expect(try client.raw.readCloseCode() == .policyViolation)
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed > 2 && elapsed < 5.5, "closed after \(elapsed) s")
    }

    @Test func shutdownClosesWith1001() async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try client.subscribe("room:lobby")
        server.process.terminate()
        #expect(try client.closeCode() == .goingAway)
        #expect(try await server.stop() == 0)
    }
}
