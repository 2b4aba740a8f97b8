import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Channels" and the channel ops: subscribe, publish, unsubscribe, history and
/// presence on every namespace, with the authorization table.
@Suite(.ownThread) struct ProtocolChannelTests {
    @Test func subscribeToAnEmptyRoom() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let result = try alice.subscribe("room:lobby")
        #expect(result["channel"] as? String == "room:lobby")
        #expect(result["epoch"] as? String == "", "a channel without publications has epoch \"\"")
        #expect(JSON.int(result["offset"]) == 0)
        #expect(result["recovered"] == nil, "recovered is absent without since")
        #expect((result["publications"] as? [Any])?.isEmpty == true)
    }

    @Test func publicationsReachSubscribersWithOffsetsOneTwoThree() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        let (carol, _) = try ProtocolClient.signedUp("carol", port: server.port)
        try alice.subscribe("room:lobby")
        try bob.subscribe("room:lobby")
        var epoch = ""
        let before = JSON.nowMilliseconds
        let datas: [Any] = [["text": "hi"], "plain string", 42, [1, "two", ["three": 3]]]
        for (index, data) in datas.enumerated() {
            let result = try bob.publish("room:lobby", data)
            if index == 0 { epoch = result["epoch"] as? String ?? "" }
            #expect(!epoch.isEmpty, "the first publication gives the channel its epoch")
            #expect(result["epoch"] as? String == epoch)
            #expect(JSON.int(result["offset"]) == index + 1)
            let time = try #require(JSON.int(result["time"]))
            #expect(time >= before - 1000 && time <= JSON.nowMilliseconds + 1000)
        }
        for receiver in [alice, bob] {  // bob is subscribed, so he gets his own publications too
            for (index, data) in datas.enumerated() {
                let event = try receiver.nextEvent("publication")
                #expect(event["channel"] as? String == "room:lobby")
                #expect(event["epoch"] as? String == epoch)
                #expect(JSON.int(event["offset"]) == index + 1)
                #expect(event["type"] as? String == "message")
                #expect(event["from"] as? String == "bob")
                #expect(JSON.text(event["data"]!) == JSON.text(data))
                #expect(JSON.int(event["time"]) != nil)
                #expect(event["id"] == nil)
            }
        }
        #expect(try carol.eventIfAny(within: 0.2) == nil, "carol is not subscribed")
    }

    /// `data` is any JSON value and comes back as the same value, in events and in history.
    @Test func dataRoundTripsAnyJSONValue() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("room:data")
        let values: [Any] = [
            NSNull(), true, false, 0, -17, 1.5, "", "héllo \"quoted\" \\ / \n\t 😀 \u{1}", [] as [Any], [:] as JSONObject,
            ["nested": ["deep": [1, [2, [3]]]], "empty": NSNull(), "flag": false] as JSONObject,
        ]
        for value in values {
            try alice.publish("room:data", value)
            let event = try alice.nextEvent("publication")
            #expect(JSON.text(event["data"] ?? "absent") == JSON.text(value), "\(JSON.text(value))")
        }
        let history = try alice.ok("history", ["channel": "room:data", "limit": 100])
        let kept = (history["publications"] as? [JSONObject] ?? []).reversed().map { JSON.text($0["data"] ?? "absent") }
        #expect(kept == values.map { JSON.text($0) })
    }

    @Test func publishCarriesItsType() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("room:lobby")
        try alice.publish("room:lobby", ["typing": true], type: "typing.start")
        try alice.publish("room:lobby", "x", type: String(repeating: "t", count: 32))
        try alice.publish("room:lobby", "x", type: "a_1.b")
        #expect(try alice.nextEvent("publication")["type"] as? String == "typing.start")
        #expect(try alice.nextEvent("publication")["type"] as? String == String(repeating: "t", count: 32))
        #expect(try alice.nextEvent("publication")["type"] as? String == "a_1.b")
    }

    @Test(arguments: ["", "Typing", "with space", "dash-ed", String(repeating: "t", count: 33)])
    func invalidTypeIsRefused(type: String) async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("room:lobby")
        let answer = try alice.request("publish", ["channel": "room:lobby", "data": "x", "type": type])
        #expect(JSON.bool(answer["ok"]) == false, "type \(type): \(JSON.text(answer))")
        #expect(try alice.eventIfAny(within: 0.2) == nil, "nothing was published")
    }

    @Test func publishingToAChannelWithoutSubscribingIsAllowed() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        try alice.subscribe("room:lobby")
        #expect(JSON.int(try bob.publish("room:lobby", "hi")["offset"]) == 1)
        #expect(try alice.nextEvent("publication")["from"] as? String == "bob")
        #expect(try bob.eventIfAny(within: 0.2) == nil, "bob did not subscribe")
    }

    @Test func subscribeReportsTheLatestOffset() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        _ = try alice.publishAll("room:lobby", ["a", "b", "c"])
        let result = try alice.subscribe("room:lobby")
        #expect(JSON.int(result["offset"]) == 3)
        #expect((result["publications"] as? [Any])?.isEmpty == true, "no since, no publications")
    }

    @Test func subscribingTwiceDoesNotDuplicateEvents() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("room:lobby")
        try alice.subscribe("room:lobby")
        try alice.publish("room:lobby", "once")
        #expect(JSON.int(try alice.nextEvent("publication")["offset"]) == 1)
        #expect(try alice.eventIfAny(within: 0.3) == nil, "one subscription, one event")
    }

    @Test func unsubscribeStopsEvents() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        try alice.subscribe("room:lobby")
        try bob.publish("room:lobby", 1)
        #expect(JSON.int(try alice.nextEvent("publication")["offset"]) == 1)
        let result = try alice.ok("unsubscribe", ["channel": "room:lobby"])
        #expect(result.isEmpty, "\(JSON.text(result))")
        try bob.publish("room:lobby", 2)
        #expect(try alice.eventIfAny(within: 0.3) == nil)
        #expect(try alice.errorCode("unsubscribe", ["channel": "room:lobby"]) == "not_subscribed")
        #expect(try alice.errorCode("unsubscribe", ["channel": "room:elsewhere"]) == "not_subscribed")
    }

    @Test func subscriptionsBelongToTheConnectionNotTheUser() async throws {
        let server = try await startHuddle()
        let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let phone = try ProtocolClient.authenticated(token, port: server.port)
        try alice.subscribe("room:lobby")
        try alice.publish("room:lobby", "hi")
        #expect(try alice.nextEvent("publication")["data"] as? String == "hi")
        #expect(try phone.eventIfAny(within: 0.3) == nil)
    }

    // MARK: Inbox

    @Test func inboxIsForItsOwnerAndOnlyTheServerPublishes() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        let own = try alice.subscribe("inbox:alice")
        #expect(own["channel"] as? String == "inbox:alice")
        #expect(JSON.int(own["offset"]) == 0)
        #expect(try bob.errorCode("subscribe", ["channel": "inbox:alice"]) == "forbidden")
        #expect(try bob.errorCode("history", ["channel": "inbox:alice"]) == "forbidden")
        #expect(try alice.errorCode("publish", ["channel": "inbox:alice", "data": "note to self"]) == "forbidden")
        #expect(try bob.errorCode("publish", ["channel": "inbox:alice", "data": "hi"]) == "forbidden")
        #expect(try alice.eventIfAny(within: 0.2) == nil)
        let history = try alice.ok("history", ["channel": "inbox:alice"])
        #expect((history["publications"] as? [Any])?.isEmpty == true)
        #expect(try bob.errorCode("unsubscribe", ["channel": "inbox:alice"]) == "not_subscribed")
        #expect(try alice.ok("unsubscribe", ["channel": "inbox:alice"]).isEmpty)
    }

    // MARK: Chat

    @Test func chatIsForItsPair() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        let (carol, _) = try ProtocolClient.signedUp("carol", port: server.port)
        // Chat rooms are written between friends (protocol.md, "Chat").
        try alice.ok("friend_request", ["user": "bob"])
        try bob.ok("friend_accept", ["user": "alice"])
        _ = try alice.nextEvent("presence")
        _ = try bob.nextEvent("presence")
        try alice.subscribe("chat:alice~bob")
        try bob.subscribe("chat:alice~bob")
        #expect(JSON.int(try alice.publish("chat:alice~bob", ["text": "hi bob"])["offset"]) == 1)
        #expect(JSON.int(try bob.publish("chat:alice~bob", ["text": "hi alice"])["offset"]) == 2)
        for client in [alice, bob] {
            let events = try client.publications(2)
            #expect(events.map { $0["from"] as? String } == ["alice", "bob"])
            #expect(events.map { JSON.int($0["offset"]) } == [1, 2])
            #expect(events.allSatisfy { $0["channel"] as? String == "chat:alice~bob" })
        }
        #expect(try carol.errorCode("subscribe", ["channel": "chat:alice~bob"]) == "forbidden")
        #expect(try carol.errorCode("publish", ["channel": "chat:alice~bob", "data": "hi"]) == "forbidden")
        #expect(try carol.errorCode("history", ["channel": "chat:alice~bob"]) == "forbidden")
        let history = try bob.ok("history", ["channel": "chat:alice~bob"])
        #expect((history["publications"] as? [JSONObject])?.map { JSON.int($0["offset"]) } == [2, 1])
        #expect(try alice.ok("unsubscribe", ["channel": "chat:alice~bob"]).isEmpty)
        try bob.publish("chat:alice~bob", ["text": "still there?"])
        #expect(JSON.int(try bob.nextEvent("publication")["offset"]) == 3)
        #expect(try alice.eventIfAny(within: 0.2) == nil)
    }

    @Test func chatNameMustBeCanonical() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        for (op, fields) in [
            ("subscribe", ["channel": "chat:bob~alice"]), ("publish", ["channel": "chat:bob~alice", "data": "x"]),
            ("history", ["channel": "chat:bob~alice"]), ("unsubscribe", ["channel": "chat:bob~alice"]),
        ] as [(String, JSONObject)] {
            #expect(try alice.errorCode(op, fields) == "invalid_channel", "\(op) by alice")
            #expect(try bob.errorCode(op, fields) == "invalid_channel", "\(op) by bob")
        }
        for channel in ["chat:alice", "chat:alice~", "chat:~bob", "chat:alice~bob~carol", "chat:al ice~bob", "chat:"] {
            #expect(try alice.errorCode("subscribe", ["channel": channel]) == "invalid_channel", "\(channel)")
        }
    }

    @Test func nobodyChatsWithThemselves() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let code = try alice.errorCode("subscribe", ["channel": "chat:alice~alice"])
        #expect(code == "invalid_channel" || code == "forbidden", "\(code ?? "nil")")
        let publish = try alice.errorCode("publish", ["channel": "chat:alice~alice", "data": "x"])
        #expect(publish == "invalid_channel" || publish == "forbidden", "\(publish ?? "nil")")
    }

    // MARK: Location

    @Test func locationIsForItsUserWhileThereAreNoFriends() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        try alice.subscribe("loc:alice")
        // Only the server publishes there: place changes, decided from the user's reports.
        #expect(try alice.errorCode("publish", ["channel": "loc:alice", "data": ["place": "home"], "type": "place"]) == "forbidden")
        let home = try alice.setPlace("home", latitude: 48.8566, longitude: 2.3522, radius: 100)
        try alice.ok("region", ["place_id": home, "event": "enter", "time": JSON.nowMilliseconds])
        #expect(try alice.nextEvent("publication")["type"] as? String == "place")
        #expect(try bob.errorCode("subscribe", ["channel": "loc:alice"]) == "forbidden")
        #expect(try bob.errorCode("history", ["channel": "loc:alice"]) == "forbidden")
        #expect(try bob.errorCode("publish", ["channel": "loc:alice", "data": "x"]) == "forbidden")
        #expect(try alice.errorCode("publish", ["channel": "loc:bob", "data": "x"]) == "forbidden")
    }

    // MARK: Names

    @Test(arguments: [
        "lobby", "room", "room:", ":lobby", "nowhere:lobby", "ROOM:lobby", "room:a b", "room:a/b", "room:a:b", "room:é",
        "room:" + String(repeating: "r", count: 65), "room:" + String(repeating: "r", count: 200),
        "inbox:", "loc:", "inbox:al ice", "loc:a/b", "inbox:Alice", "loc:ALICE", "chat:Alice~bob", "",
    ])
    func invalidChannelNames(channel: String) async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        for (op, fields) in [
            ("subscribe", ["channel": channel]), ("unsubscribe", ["channel": channel]),
            ("publish", ["channel": channel, "data": "x"]), ("history", ["channel": channel]),
            ("presence", ["channel": channel]),
        ] as [(String, JSONObject)] {
            #expect(try alice.errorCode(op, fields) == "invalid_channel", "\(op) \(channel)")
        }
    }

    @Test func roomNameBoundaries() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        for channel in ["room:a", "room:" + String(repeating: "r", count: 64), "room:Az09_-.x", "room:..."] {
            #expect(try alice.subscribe(channel)["channel"] as? String == channel)
            #expect(JSON.int(try alice.publish(channel, "x")["offset"]) == 1, "\(channel)")
        }
    }

    // MARK: History

    @Test func historyPagesNewestFirstToTheEnd() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        let offsets = try alice.publishAll("room:lobby", (1...7).map { ["n": $0] })
        #expect(offsets == Array(1...7))
        var pages: [[Int]] = []
        var before: Int? = nil
        while true {
            var fields: JSONObject = ["channel": "room:lobby", "limit": 3]
            if let before { fields["before"] = before }
            let page = try bob.ok("history", fields)  // any signed-in user may read a room
            #expect(page["channel"] as? String == "room:lobby")
            #expect(JSON.int(page["offset"]) == 7)
            #expect(!((page["epoch"] as? String) ?? "").isEmpty)
            let publications = try #require(page["publications"] as? [JSONObject])
            pages.append(publications.compactMap { JSON.int($0["offset"]) })
            for publication in publications {
                let offset = JSON.int(publication["offset"]) ?? 0
                #expect(JSON.text(publication["data"] ?? 0) == JSON.text(["n": offset]))
                #expect(publication["from"] as? String == "alice")
                #expect(publication["type"] as? String == "message")
                #expect(JSON.int(publication["time"]) != nil)
            }
            if JSON.isNull(page["next_before"]) { break }
            guard let next = JSON.int(page["next_before"]) else {
                Issue.record("next_before is neither an integer nor null: \(JSON.text(page))")
                break
            }
            before = next
            #expect(pages.count < 10)
        }
        #expect(pages == [[7, 6, 5], [4, 3, 2], [1]])
    }

    @Test func historyDefaultsToFiftyAndAllowsAHundred() async throws {
        let server = try await startHuddle()
        let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
        // 120 publications from two connections: one connection's burst is 100 requests.
        let second = try ProtocolClient.authenticated(token, port: server.port)
        _ = try alice.publishAll("room:lobby", (1...60).map { $0 })
        _ = try second.publishAll("room:lobby", (61...120).map { $0 })
        let reader = try ProtocolClient.authenticated(token, port: server.port)
        let first = try reader.ok("history", ["channel": "room:lobby"])
        #expect((first["publications"] as? [JSONObject])?.compactMap { JSON.int($0["offset"]) } == Array((71...120).reversed()))
        #expect(JSON.int(first["next_before"]) == 71)
        let hundred = try reader.ok("history", ["channel": "room:lobby", "limit": 100, "before": 101])
        #expect((hundred["publications"] as? [JSONObject])?.compactMap { JSON.int($0["offset"]) } == Array((1...100).reversed()))
        #expect(JSON.isNull(hundred["next_before"]))
        let last = try reader.ok("history", ["channel": "room:lobby", "limit": 100, "before": 21])
        #expect((last["publications"] as? [JSONObject])?.compactMap { JSON.int($0["offset"]) } == Array((1...20).reversed()))
        #expect(JSON.isNull(last["next_before"]), "\(JSON.text(last["next_before"] ?? 0))")
    }

    @Test func historyBeforeOneIsEmptyAndBeforeBeyondTheEndStartsAtTheNewest() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        _ = try alice.publishAll("room:lobby", [1, 2, 3])
        let none = try alice.ok("history", ["channel": "room:lobby", "before": 1])
        #expect((none["publications"] as? [Any])?.isEmpty == true)
        #expect(JSON.isNull(none["next_before"]))
        let all = try alice.ok("history", ["channel": "room:lobby", "before": 1000])
        #expect((all["publications"] as? [JSONObject])?.compactMap { JSON.int($0["offset"]) } == [3, 2, 1])
    }

    @Test func historyOfAnEmptyChannel() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let page = try alice.ok("history", ["channel": "room:empty"])
        #expect(page["epoch"] as? String == "")
        #expect(JSON.int(page["offset"]) == 0)
        #expect((page["publications"] as? [Any])?.isEmpty == true)
        #expect(JSON.isNull(page["next_before"]))
    }

    @Test(arguments: [0, 101, -1])
    func historyLimitOutOfRangeIsRefused(limit: Int) async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let answer = try alice.request("history", ["channel": "room:lobby", "limit": limit])
        #expect(JSON.bool(answer["ok"]) == false, "limit \(limit): \(JSON.text(answer))")
    }

    // MARK: Presence

    @Test func presenceListsSignedInUsersWithALiveSubscription() async throws {
        let server = try await startHuddle()
        let (alice, aliceToken) = try ProtocolClient.signedUp("alice", port: server.port)
        let (carol, _) = try ProtocolClient.signedUp("carol", port: server.port)
        let alicePhone = try ProtocolClient.authenticated(aliceToken, port: server.port)
        try carol.subscribe("room:lobby")
        try alice.subscribe("room:lobby")
        try alicePhone.subscribe("room:lobby")
        do {
            let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
            try bob.subscribe("room:lobby")
            try bob.subscribe("room:other")
            let result = try alice.ok("presence", ["channel": "room:lobby"])
            #expect(result["channel"] as? String == "room:lobby")
            #expect(result["users"] as? [String] == ["alice", "bob", "carol"], "sorted, each user once")
            #expect(try bob.ok("presence", ["channel": "room:other"])["users"] as? [String] == ["bob"])
            _ = try bob.ok("unsubscribe", ["channel": "room:lobby"])
            #expect(try alice.ok("presence", ["channel": "room:lobby"])["users"] as? [String] == ["alice", "carol"])
        }  // bob disconnects here: room:other has nobody left
        _ = try carol.ok("unsubscribe", ["channel": "room:lobby"])
        try alice.raw.sendFrame(.close, [0x03, 0xE8])
        #expect(try alice.closeCode() == .normalClosure)
        // alice's phone is still subscribed: she stays listed.
        #expect(try carol.ok("presence", ["channel": "room:lobby"])["users"] as? [String] == ["alice"])
        // Counted attempts, not a wall-clock deadline: on a busy machine a sleeping test may
        // resume late, and it must still look again before giving up.
        var attempts = 0
        var other: [String]? = nil
        repeat {
            other = try carol.ok("presence", ["channel": "room:other"])["users"] as? [String]
            if other == [] { break }
            try await Task.sleep(for: .milliseconds(50))
            attempts += 1
        } while attempts < 60
        #expect(other == [], "a closed connection is not live")
    }

    @Test func presenceIsOnlyForRooms() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try ProtocolClient.signedUp("bob", port: server.port)
        for channel in ["inbox:alice", "chat:alice~bob", "loc:alice"] {
            #expect(try alice.errorCode("presence", ["channel": channel]) == "invalid_channel", "\(channel)")
        }
        #expect(try alice.ok("presence", ["channel": "room:nobody"])["users"] as? [String] == [])
    }

    @Test func nobodyWithoutFriendsReceivesPresenceEvents() async throws {
        let server = try await startHuddle(["--presence-grace", "1"])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("room:lobby")
        // carol, bob's friend, is told when bob goes offline: the core decides it once for all
        // recipients, so once carol has heard it, alice's barrier shows whether she was told too.
        let (carol, _) = try ProtocolClient.signedUp("carol", port: server.port)
        do {
            let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
            try bob.subscribe("room:lobby")
            try carol.ok("friend_request", ["user": "bob"])
            try bob.ok("friend_accept", ["user": "carol"])
        }
        while true {
            let event = try carol.nextEvent(timeout: 10)
            if event["event"] as? String == "presence", event["user"] as? String == "bob", JSON.bool(event["online"]) == false { break }
        }
        #expect(try alice.eventsBeforeBarrier().isEmpty)
    }
}
