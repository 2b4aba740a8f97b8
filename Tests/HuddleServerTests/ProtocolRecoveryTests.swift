import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Offsets and epochs": a client that saved its position resumes exactly where it
/// was, or is told plainly that it cannot.
@Suite(.ownThread) struct ProtocolRecoveryTests {
    /// The acceptance test: A records its position, leaves, B publishes 25, A comes back with
    /// `since` and gets exactly those 25 in order, then live events with no gap or duplicate.
    @Test(arguments: ["room:lobby", "chat:alice~bob"])
    func reconnectWithSinceRecoversExactlyTheMissedPublications(channel: String) async throws {
        let server = try await startHuddle()
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        let position: (epoch: String, offset: Int)
        let aliceToken: String
        do {
            let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
            aliceToken = token
            if channel.hasPrefix("chat:") {
                // Chat rooms are written between friends (protocol.md, "Chat").
                try alice.ok("friend_request", ["user": "bob"])
                try bob.ok("friend_accept", ["user": "alice"])
                _ = try alice.nextEvent("presence")
                _ = try bob.nextEvent("presence")
            }
            try alice.subscribe(channel)
            _ = try bob.publishAll(channel, (1...3).map { ["n": $0] })
            let seen = try alice.publications(3)
            #expect(seen.map { JSON.int($0["offset"]) } == [1, 2, 3])
            let last = try #require(seen.last)
            position = (try #require(last["epoch"] as? String), try #require(JSON.int(last["offset"])))
        }  // alice's connection drops here, without a close frame
        let missed = try bob.publishAll(channel, (4...28).map { ["n": $0] })
        #expect(missed == Array(4...28))

        let alice = try ProtocolClient(port: server.port, credential: .header(aliceToken))
        _ = try alice.nextEvent("session")
        let result = try alice.subscribe(channel, since: position)
        #expect(result["channel"] as? String == channel)
        #expect(result["epoch"] as? String == position.epoch)
        #expect(JSON.int(result["offset"]) == 28)
        #expect(JSON.bool(result["recovered"]) == true, "\(JSON.text(result["recovered"] ?? "absent"))")
        let publications = try #require(result["publications"] as? [JSONObject])
        #expect(publications.map { JSON.int($0["offset"]) } == Array(4...28))
        #expect(publications.map { JSON.text($0["data"] ?? 0) } == (4...28).map { JSON.text(["n": $0]) })
        #expect(publications.allSatisfy { $0["from"] as? String == "bob" && $0["type"] as? String == "message" && JSON.int($0["time"]) != nil })

        _ = try bob.publishAll(channel, (29...33).map { ["n": $0] })
        let live = try alice.publications(5)
        #expect(live.map { JSON.int($0["offset"]) } == Array(29...33))
        #expect(live.map { JSON.text($0["data"] ?? 0) } == (29...33).map { JSON.text(["n": $0]) })
        #expect(try alice.eventIfAny(within: 0.3) == nil, "no duplicate after the live events")
    }

    /// Publications racing the recovering subscribe: whatever the interleaving, reply plus events
    /// hold every offset after `since` exactly once, in order.
    @Test func recoveryRacingLivePublicationsHasNoGapOrDuplicate() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        _ = try bob.publishAll("room:race", (1...20).map { $0 })
        let epoch = try #require(try bob.ok("history", ["channel": "room:race", "limit": 1])["epoch"] as? String)
        let racing = try bob.sendBatch((21...80).map { ("publish", ["channel": "room:race", "data": $0]) })
        let result = try alice.subscribe("room:race", since: (epoch, 0))
        #expect(JSON.bool(result["recovered"]) == true)
        var offsets = (result["publications"] as? [JSONObject] ?? []).compactMap { JSON.int($0["offset"]) }
        #expect(offsets.first == 1)
        while (offsets.last ?? 0) < 80 {
            let event = try alice.nextEvent("publication")
            offsets.append(JSON.int(event["offset"]) ?? -1)
        }
        #expect(offsets == Array(1...80))
        #expect(JSON.int(result["offset"]) == (result["publications"] as? [Any])?.count, "offset is the last one returned")
        for id in racing { #expect(JSON.bool(try bob.reply(to: id)["ok"]) == true) }
        #expect(try alice.eventIfAny(within: 0.3) == nil)
    }

    @Test func sinceTheLatestPositionRecoversNothing() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let published = try alice.publishAll("room:lobby", ["a", "b"])
        let epoch = try #require(alice.subscribe("room:lobby")["epoch"] as? String)
        let again = try alice.subscribe("room:lobby", since: (epoch, published.last!))
        #expect(JSON.bool(again["recovered"]) == true)
        #expect((again["publications"] as? [Any])?.isEmpty == true)
        #expect(JSON.int(again["offset"]) == 2)
        try alice.publish("room:lobby", "c")
        #expect(JSON.int(try alice.nextEvent("publication")["offset"]) == 3)
        #expect(try alice.eventIfAny(within: 0.2) == nil, "resubscribing did not double the subscription")
    }

    /// Subscribing again while subscribed is how a client asks for a recovery again: the missed
    /// publications come in the reply, and live events are not doubled.
    @Test func resubscribingWithAnOlderPositionRecoversAgain() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("room:lobby")
        _ = try alice.publishAll("room:lobby", ["a", "b", "c"])
        let events = try alice.publications(3)
        let epoch = try #require(events.first?["epoch"] as? String)
        let again = try alice.subscribe("room:lobby", since: (epoch, 1))
        #expect(JSON.bool(again["recovered"]) == true)
        #expect((again["publications"] as? [JSONObject])?.compactMap { $0["data"] as? String } == ["b", "c"])
        try alice.publish("room:lobby", "d")
        #expect(try alice.nextEvent("publication")["data"] as? String == "d")
        #expect(try alice.eventIfAny(within: 0.3) == nil)
    }

    @Test func theEmptyChannelPositionOfAChannelStillEmptyIsRecovered() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let result = try alice.subscribe("room:quiet", since: ("", 0))
        #expect(JSON.bool(result["recovered"]) == true)
        #expect((result["publications"] as? [Any])?.isEmpty == true)
        try alice.publish("room:quiet", "first")
        #expect(JSON.int(try alice.nextEvent("publication")["offset"]) == 1)
    }

    @Test func theEmptyChannelPositionRecoversTheWholeChannel() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let empty = try alice.subscribe("room:lobby")
        #expect(empty["epoch"] as? String == "" && JSON.int(empty["offset"]) == 0)
        _ = try alice.ok("unsubscribe", ["channel": "room:lobby"])
        _ = try alice.publishAll("room:lobby", ["a", "b", "c", "d", "e"])
        // The position of an empty channel, {"epoch": "", "offset": 0}, recovers from offset 1.
        let result = try alice.subscribe("room:lobby", since: ("", 0))
        #expect(JSON.bool(result["recovered"]) == true)
        #expect(result["epoch"] as? String != "")
        #expect((result["publications"] as? [JSONObject])?.compactMap { $0["data"] as? String } == ["a", "b", "c", "d", "e"])
    }

    @Test func aWrongEpochIsNotRecovered() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        _ = try alice.publishAll("room:lobby", ["a", "b", "c"])
        let epoch = try #require(try alice.ok("history", ["channel": "room:lobby"])["epoch"] as? String)
        #expect(!epoch.isEmpty)
        let result = try alice.subscribe("room:lobby", since: (epoch + "x", 1))
        #expect(JSON.bool(result["recovered"]) == false)
        #expect((result["publications"] as? [Any])?.isEmpty == true)
        #expect(result["epoch"] as? String == epoch)
        #expect(JSON.int(result["offset"]) == 3)
        // Subscribed all the same: live events follow.
        try alice.publish("room:lobby", "d")
        #expect(JSON.int(try alice.nextEvent("publication")["offset"]) == 4)
    }

    /// Room history keeps 1000 publications and a recovery returns at most 1000: 1000 missed are
    /// recovered, 1001 are not, and history then pages back over exactly the kept 1000.
    @Test func aGapBeyondTheKeptHistoryIsNotRecovered() async throws {
        let server = try await startHuddle(["--user-rate-limit", "1000"])
        let (alice, aliceToken) = try ProtocolClient.signedUp("alice", port: server.port)
        let (_, bobToken) = try ProtocolClient.signedUp("bob", port: server.port)
        try alice.subscribe("room:busy")
        try alice.publish("room:busy", ["n": 1])
        let first = try alice.nextEvent("publication")
        let position = (try #require(first["epoch"] as? String), 1)
        _ = try alice.ok("unsubscribe", ["channel": "room:busy"])

        #expect(try ProtocolClient.flood("room:busy", count: 1000, first: 2, token: bobToken, port: server.port) == Array(2...1001))
        let thousand = try ProtocolClient(port: server.port, credential: .header(aliceToken))
        let recovered = try thousand.subscribe("room:busy", since: position)
        #expect(JSON.bool(recovered["recovered"]) == true)
        let publications = recovered["publications"] as? [JSONObject] ?? []
        #expect(publications.count == 1000)
        #expect(publications.compactMap { JSON.int($0["offset"]) } == Array(2...1001))

        _ = try ProtocolClient.flood("room:busy", count: 1, first: 1002, token: bobToken, port: server.port)
        let late = try ProtocolClient(port: server.port, credential: .header(aliceToken))
        let lost = try late.subscribe("room:busy", since: position)
        #expect(JSON.bool(lost["recovered"]) == false)
        #expect((lost["publications"] as? [Any])?.isEmpty == true)
        #expect(JSON.int(lost["offset"]) == 1002)
        #expect(lost["epoch"] as? String == position.0, "the epoch did not change: history was trimmed, not lost")

        // Catching up by history: newest first, 1000 kept, then the end.
        var offsets: [Int] = []
        var before: Int? = nil
        repeat {
            var fields: JSONObject = ["channel": "room:busy", "limit": 100]
            if let before { fields["before"] = before }
            let page = try late.ok("history", fields)
            offsets += (page["publications"] as? [JSONObject] ?? []).compactMap { JSON.int($0["offset"]) }
            before = JSON.int(page["next_before"])
            if before == nil { #expect(JSON.isNull(page["next_before"])) }
        } while before != nil && offsets.count < 2000
        #expect(offsets == Array((3...1002).reversed()))
        // A `before` at or below the oldest kept offset: an empty page, and nothing older.
        let below = try late.ok("history", ["channel": "room:busy", "before": 3])
        #expect((below["publications"] as? [Any])?.isEmpty == true && JSON.isNull(below["next_before"]))
        #expect(JSON.int(below["offset"]) == 1002 && below["epoch"] as? String == position.0)
    }

    /// "The epoch changes only if the server lost the channel's history (it never does in normal
    /// operation, including restarts)": positions, accounts and sessions outlive a restart.
    @Test(arguments: ["SIGTERM", "SIGKILL"])
    func positionsAccountsAndSessionsSurviveARestart(signal: String) async throws {
        let directory = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let epoch: String
        let aliceToken: String
        let revokedToken: String
        do {
            let server = try await startHuddle(dataDirectory: directory, fsync: "always")
            let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
            aliceToken = token
            let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
            let (doomed, doomedToken) = try ProtocolClient.signedUp("carol", port: server.port)
            revokedToken = doomedToken
            try doomed.ok("logout")
            try alice.subscribe("room:lobby")
            _ = try bob.publishAll("room:lobby", (1...5).map { ["n": $0] })
            epoch = try #require(try alice.publications(5).last?["epoch"] as? String)
            // Every reply above was ok, so every change is on disk (--fsync always).
            if signal == "SIGKILL" {
                try await server.kill9()
            } else {
                server.process.terminate()
                #expect(try alice.closeCode() == .goingAway)
                #expect(try await server.stop() == 0)
            }
        }
        let server = try await startHuddle(dataDirectory: directory, fsync: "always")
        let alice = try ProtocolClient(port: server.port, credential: .header(aliceToken))
        #expect((try alice.nextEvent("session")["user"] as? JSONObject)?["username"] as? String == "alice")
        let result = try alice.subscribe("room:lobby", since: (epoch, 2))
        #expect(result["epoch"] as? String == epoch)
        #expect(JSON.bool(result["recovered"]) == true)
        #expect((result["publications"] as? [JSONObject])?.compactMap { JSON.int($0["offset"]) } == [3, 4, 5])
        #expect(JSON.int(try alice.publish("room:lobby", ["n": 6])["offset"]) == 6, "offsets continue after a restart")
        try ProtocolClient(port: server.port).login("bob")
        #expect(try ProtocolClient(port: server.port).errorCode("auth", ["token": revokedToken]) == "invalid_token")
        #expect(try ProtocolClient(port: server.port).errorCode("signup", ["username": "bob", "email": "new@example.com", "password": ProtocolClient.password]) == "username_taken")
    }

    /// `loc:` keeps 100 publications (place changes): 100 missed are recovered, 101 are not.
    @Test func locationHistoryKeepsAHundred() async throws {
        let server = try await startHuddle()
        let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("loc:alice")
        let home = try alice.setPlace("home", latitude: 48.8566, longitude: 2.3522, radius: 100)
        let baseTime = JSON.nowMilliseconds - 3_600_000
        try ProtocolClient.placeChanges(placeID: home, count: 1, baseTime: baseTime, token: token, port: server.port)
        let epoch = try #require(try alice.nextEvent("publication")["epoch"] as? String)
        _ = try alice.ok("unsubscribe", ["channel": "loc:alice"])
        try ProtocolClient.placeChanges(placeID: home, count: 100, first: 1, baseTime: baseTime, token: token, port: server.port)
        let all = try ProtocolClient(port: server.port, credential: .header(token)).subscribe("loc:alice", since: (epoch, 1))
        #expect(JSON.bool(all["recovered"]) == true)
        #expect((all["publications"] as? [Any])?.count == 100)
        try ProtocolClient.placeChanges(placeID: home, count: 1, first: 101, baseTime: baseTime, token: token, port: server.port)
        let late = try ProtocolClient(port: server.port, credential: .header(token))
        let lost = try late.subscribe("loc:alice", since: (epoch, 1))
        #expect(JSON.bool(lost["recovered"]) == false)
        let history = try late.ok("history", ["channel": "loc:alice", "limit": 100])
        #expect((history["publications"] as? [JSONObject])?.compactMap { JSON.int($0["offset"]) } == Array((3...102).reversed()))
        #expect(JSON.isNull(history["next_before"]), "nothing older is kept")
    }

    @Test func malformedSinceIsABadRequest() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        for since in ["string", 5, ["epoch": "e"], ["offset": 1], ["epoch": 1, "offset": 1], ["epoch": "e", "offset": "1"], ["epoch": "e", "offset": 1.5]] as [Any] {
            #expect(try alice.errorCode("subscribe", ["channel": "room:lobby", "since": since]) == "bad_request", "since \(JSON.text(since))")
        }
    }
}
