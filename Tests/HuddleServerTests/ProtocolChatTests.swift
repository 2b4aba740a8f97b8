import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Chat", over real sockets against the real binary: friends-only writing,
/// idempotent `client_id`, live delivery to every device, history paging, read markers and
/// unread counts, typing — and the durable parts across a restart.
@Suite(.ownThread) struct ProtocolChatTests {
    static let room = "chat:alice~bob"

    /// alice and bob, friends, each with the presence event of the befriending consumed.
    private func friends(port: Int) throws -> (alice: ProtocolClient, aliceToken: String, bob: ProtocolClient, bobToken: String) {
        let (alice, aliceToken, bob, bobToken) = try ProtocolClient.friends("alice", "bob", port: port)
        return (alice, aliceToken, bob, bobToken)
    }

    @Test func onlyFriendsWriteAndEveryDeviceReceivesOnce() async throws {
        let server = try await startHuddle()
        let (alice, _, bob, bobToken) = try friends(port: server.port)
        let (carol, _) = try ProtocolClient.signedUp("carol", port: server.port)
        #expect(try carol.errorCode("publish", ["channel": "chat:alice~carol", "data": "hi"]) == "not_friends")
        #expect(try carol.errorCode("publish", ["channel": Self.room, "data": "hi"]) == "forbidden")

        let bobsPhone = try ProtocolClient.authenticated(bobToken, port: server.port)
        try bob.subscribe(Self.room)
        try bobsPhone.subscribe(Self.room)
        let first = try alice.ok("publish", ["channel": Self.room, "data": ["text": "hi"], "client_id": "m-1"])
        #expect(JSON.int(first["offset"]) == 1 && first["duplicate"] == nil)
        // The reply was "lost": the retry gets the same position and nothing is delivered again.
        let retry = try alice.ok("publish", ["channel": Self.room, "data": ["text": "hi"], "client_id": "m-1"])
        #expect(JSON.int(retry["offset"]) == 1 && JSON.bool(retry["duplicate"]) == true)
        #expect(JSON.int(retry["time"]) == JSON.int(first["time"]))
        #expect(try alice.errorCode("publish", ["channel": Self.room, "data": 1, "client_id": ""]) == "bad_request")
        for device in [bob, bobsPhone] {
            let event = try device.nextEvent("publication")
            #expect(JSON.int(event["offset"]) == 1 && event["client_id"] as? String == "m-1" && event["from"] as? String == "alice")
            #expect(try device.eventIfAny(within: 0.3) == nil, "delivered once")
        }
        let history = try bob.ok("history", ["channel": Self.room])
        #expect((history["publications"] as? [JSONObject])?.map { $0["client_id"] as? String } == ["m-1"])

        // Unfriended: the room stays readable, writing and typing are refused.
        try bob.ok("friend_remove", ["user": "alice"])
        #expect(try alice.errorCode("publish", ["channel": Self.room, "data": "still?"]) == "not_friends")
        #expect(try alice.errorCode("typing", ["channel": Self.room]) == "not_friends")
        #expect(try alice.ok("history", ["channel": Self.room])["publications"] as? [JSONObject] != nil)
    }

    @Test func historyPagesNewestFirstAndPastTheEnd() async throws {
        let server = try await startHuddle()
        let (alice, _, bob, _) = try friends(port: server.port)
        _ = try alice.publishAll(Self.room, (1...5).map { ["n": $0] })
        let page1 = try bob.ok("history", ["channel": Self.room, "limit": 2])
        #expect((page1["publications"] as? [JSONObject])?.map { JSON.int($0["offset"]) } == [5, 4])
        let page2 = try bob.ok("history", ["channel": Self.room, "limit": 2, "before": JSON.int(page1["next_before"])!])
        #expect((page2["publications"] as? [JSONObject])?.map { JSON.int($0["offset"]) } == [3, 2])
        let page3 = try bob.ok("history", ["channel": Self.room, "limit": 2, "before": JSON.int(page2["next_before"])!])
        #expect((page3["publications"] as? [JSONObject])?.map { JSON.int($0["offset"]) } == [1])
        #expect(JSON.isNull(page3["next_before"]))
        let past = try bob.ok("history", ["channel": Self.room, "limit": 2, "before": 1])
        #expect((past["publications"] as? [JSONObject])?.isEmpty == true && JSON.isNull(past["next_before"]))
    }

    @Test func readMarkersUnreadAndTyping() async throws {
        let server = try await startHuddle()
        let (alice, _, bob, _) = try friends(port: server.port)
        #expect(JSON.int(try bob.ok("unread")["total"]) == 0)
        _ = try alice.publishAll(Self.room, ["a", "b", "c"])
        let unread = try bob.ok("unread")
        #expect(JSON.int(unread["total"]) == 3)
        let rooms = try #require(unread["rooms"] as? [JSONObject])
        #expect(rooms.count == 1 && rooms[0]["channel"] as? String == Self.room)
        #expect(JSON.int(rooms[0]["offset"]) == 3 && JSON.int(rooms[0]["read"]) == 0 && JSON.int(rooms[0]["unread"]) == 3)
        #expect(JSON.int(try alice.ok("unread")["total"]) == 0, "one's own messages are read")

        let marked = try bob.ok("mark_read", ["channel": Self.room, "offset": 2])
        #expect(JSON.int(marked["read"]) == 2 && JSON.int(marked["unread"]) == 1 && JSON.int(marked["badge"]) == 1)
        #expect(JSON.int(try bob.ok("mark_read", ["channel": Self.room, "offset": 1])["read"]) == 2, "never backwards")
        #expect(try bob.errorCode("mark_read", ["channel": "room:lobby", "offset": 1]) == "invalid_channel")
        #expect(try bob.errorCode("mark_read", ["channel": Self.room]) == "bad_request")

        // Typing reaches the other member and is never stored.
        #expect(try alice.ok("typing", ["channel": Self.room]).isEmpty)
        let typing = try bob.nextEvent("typing")
        #expect(typing["channel"] as? String == Self.room && typing["user"] as? String == "alice" && JSON.int(typing["time"]) != nil)
        #expect(try alice.eventIfAny(within: 0.2) == nil, "the typist is not told")
        #expect(JSON.int(try bob.ok("history", ["channel": Self.room])["offset"]) == 3)
    }

    @Test func markersAndClientIDsSurviveARestart() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var tokens: (alice: String, bob: String) = ("", "")
        do {
            let server = try await startHuddle(dataDirectory: data)
            let (alice, aliceToken, bob, bobToken) = try friends(port: server.port)
            tokens = (aliceToken, bobToken)
            try alice.ok("publish", ["channel": Self.room, "data": "one", "client_id": "x-1"])
            try alice.ok("publish", ["channel": Self.room, "data": "two", "client_id": "x-2"])
            try bob.ok("mark_read", ["channel": Self.room, "offset": 1])
            #expect(try await server.stop() == 0)
        }
        let server = try await startHuddle(dataDirectory: data)
        let alice = try ProtocolClient.authenticated(tokens.alice, port: server.port)
        let bob = try ProtocolClient.authenticated(tokens.bob, port: server.port)
        let retry = try alice.ok("publish", ["channel": Self.room, "data": "two", "client_id": "x-2"])
        #expect(JSON.int(retry["offset"]) == 2 && JSON.bool(retry["duplicate"]) == true)
        let unread = try bob.ok("unread")
        #expect(JSON.int(unread["total"]) == 1)
        #expect(JSON.int((unread["rooms"] as? [JSONObject])?.first?["read"]) == 1)
    }
}
