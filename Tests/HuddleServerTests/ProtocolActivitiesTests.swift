import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Activities and matches", over real sockets against the real binary: the ops and
/// their refusals, the three-friends story with exact event counts (and silence for everyone
/// else), expiry, unfriending, the configured list, and all of it across restarts.
@Suite(.ownThread) struct ProtocolActivitiesTests {
    /// Signs up every name, makes them all friends with each other, then subscribes each to its
    /// own inbox and drains what friendship brought (presence events), so a test starts from
    /// silence.
    private func friends(_ names: [String], port: Int) throws -> [String: (client: ProtocolClient, token: String)] {
        var users: [String: (client: ProtocolClient, token: String)] = [:]
        for name in names { users[name] = try ProtocolClient.signedUp(name, port: port) }
        for (index, name) in names.enumerated() {
            for other in names[(index + 1)...] {
                try users[name]!.client.ok("friend_request", ["user": other])
                try users[other]!.client.ok("friend_accept", ["user": name])
            }
        }
        for name in names {
            let client = users[name]!.client
            try client.subscribe("inbox:\(name)")
            while try client.eventIfAny(within: 0.2) != nil {}
        }
        return users
    }

    /// The next event must be a notice of `type` on the client's inbox; returns its data.
    private func notice(_ client: ProtocolClient, _ user: String, _ type: String, timeout: Double = 5) throws -> JSONObject {
        let event = try client.nextEvent("publication", timeout: timeout)
        guard event["channel"] as? String == "inbox:\(user)", event["type"] as? String == type, JSON.isNull(event["from"]),
              let data = event["data"] as? JSONObject
        else { throw TestFailure("expected a \(type) notice on inbox:\(user), got \(JSON.text(event))") }
        return data
    }

    private func expectSilence(_ client: ProtocolClient, _ user: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let extra = try client.eventIfAny(within: 0.5)
        #expect(extra == nil, "\(user) got \(extra.map(JSON.text) ?? "")", sourceLocation: sourceLocation)
    }

    /// The inbox notice types of `user`, oldest first.
    private func inboxTypes(_ client: ProtocolClient, _ user: String) throws -> [String] {
        let history = try client.ok("history", ["channel": "inbox:\(user)", "limit": 100])
        return ((history["publications"] as? [JSONObject]) ?? []).reversed().map { $0["type"] as? String ?? "?" }
    }

    private func matchList(_ client: ProtocolClient, order: String? = nil) throws -> [String] {
        let result = try client.ok("matches", order.map { ["order": $0] } ?? [:])
        return ((result["matches"] as? [JSONObject]) ?? []).map { "\($0["user"] as? String ?? "?") \($0["activity"] as? String ?? "?")" }
    }

    @Test func theOpsAndTheirRefusals() async throws {
        let server = try await startHuddle()
        let users = try friends(["alice", "bob", "carol"], port: server.port)
        let alice = users["alice"]!.client
        _ = try ProtocolClient.signedUp("dave", port: server.port)

        let listed = try alice.ok("activities")
        #expect(listed["available"] as? [String] == ["Gym", "Coffee", "Eat", "Study", "Movie", "Shopping", "Anything"])
        #expect((listed["mine"] as? [JSONObject])?.isEmpty == true)

        let before = JSON.nowMilliseconds
        let coffee = try alice.ok("activity_on", ["activity": "coffee"])
        let since = try #require(JSON.int(coffee["since"]))
        #expect(coffee["activity"] as? String == "Coffee" && JSON.isNull(coffee["audience"]))
        #expect(since >= before - 1_000 && since <= JSON.nowMilliseconds + 1_000)
        #expect(JSON.int(coffee["expires_at"]) == since + 2 * 3600 * 1000, "two hours by default")

        let gym = try alice.ok("activity_on", ["activity": "Gym", "friends": ["Carol", "bob"], "expires_in": 600])
        #expect(gym["audience"] as? [String] == ["bob", "carol"])
        #expect(JSON.int(gym["expires_at"]) == JSON.int(gym["since"])! + 600_000)
        let mine = try #require(try alice.ok("activities")["mine"] as? [JSONObject])
        #expect(mine.map { $0["activity"] as? String } == ["Gym", "Coffee"], "in the list's order")

        // Refusals: not in the list, an audience with non-friends (named), expiry out of range.
        #expect(try alice.errorCode("activity_on", ["activity": "Skydiving"]) == "unknown_activity")
        let strangers = try alice.failure("activity_on", ["activity": "Eat", "friends": ["bob", "dave", "nobody"]])
        #expect(strangers["code"] as? String == "not_friends")
        #expect(strangers["message"] as? String == "not your friends: dave, nobody")
        #expect(try alice.errorCode("activity_on", ["activity": "Eat", "expires_in": 0]) == "bad_request")
        #expect(try alice.failure("activity_on", ["activity": "Eat", "expires_in": 86_401])["message"] as? String
            == "expires_in must be 1 to 86400 seconds")
        #expect(try alice.errorCode("activity_on", ["activity": "Eat", "friends": []]) == "bad_request")
        #expect(try alice.errorCode("matches", ["order": "name"]) == "bad_request")
        #expect((try alice.ok("activities")["mine"] as? [JSONObject])?.count == 2, "refusals change nothing")

        #expect(try alice.ok("activity_off", ["activity": "GYM"]).isEmpty)
        #expect(try alice.errorCode("activity_off", ["activity": "Gym"]) == "not_on")
        #expect(try alice.errorCode("activity_off", ["activity": "Skydiving"]) == "unknown_activity")
        #expect(try ProtocolClient(port: server.port).errorCode("activity_on", ["activity": "Gym"]) == "not_authenticated")
        #expect(try ProtocolClient(port: server.port).errorCode("matches") == "not_authenticated")
        // Nothing of this reached anyone: no match was possible.
        for name in ["alice", "bob", "carol"] { try expectSilence(users[name]!.client, name) }
    }

    /// The issue's scenario: two turn on Coffee → exactly one match event each, at once, while
    /// the third (Gym on) hears nothing; then the third turns on Anything and matches both.
    @Test func threeFriendsCoffeeGymAnything() async throws {
        let server = try await startHuddle()
        let users = try friends(["alice", "bob", "carol"], port: server.port)
        let (alice, bob, carol) = (users["alice"]!.client, users["bob"]!.client, users["carol"]!.client)

        try carol.ok("activity_on", ["activity": "Gym"])
        try alice.ok("activity_on", ["activity": "Coffee"])
        try expectSilence(alice, "alice")
        try bob.ok("activity_on", ["activity": "Coffee"])
        #expect(JSON.text(try notice(bob, "bob", "match")) == JSON.text(["user": "alice", "activity": "Coffee"]))
        #expect(JSON.text(try notice(alice, "alice", "match")) == JSON.text(["user": "bob", "activity": "Coffee"]))
        for (name, client) in [("alice", alice), ("bob", bob), ("carol", carol)] { try expectSilence(client, name) }
        #expect(try inboxTypes(carol, "carol").filter { $0.hasPrefix("match") }.isEmpty, "carol's inbox got nothing")
        #expect(try matchList(alice) == ["bob Coffee"])
        #expect(try matchList(carol) == [])

        // Turning Coffee on again while matched tells nobody anything.
        try alice.ok("activity_on", ["activity": "Coffee", "expires_in": 3600])
        try expectSilence(bob, "bob")

        try carol.ok("activity_on", ["activity": "Anything"])
        let carols = [try notice(carol, "carol", "match"), try notice(carol, "carol", "match")]
        #expect(Set(carols.map(JSON.text)) == [
            JSON.text(["user": "alice", "activity": "Coffee"]), JSON.text(["user": "bob", "activity": "Coffee"]),
        ])
        #expect(JSON.text(try notice(alice, "alice", "match")) == JSON.text(["user": "carol", "activity": "Coffee"]))
        #expect(JSON.text(try notice(bob, "bob", "match")) == JSON.text(["user": "carol", "activity": "Coffee"]))
        for (name, client) in [("alice", alice), ("bob", bob), ("carol", carol)] { try expectSilence(client, name) }
        #expect(try matchList(carol, order: "activity") == ["alice Coffee", "bob Coffee"])
        #expect(try inboxTypes(alice, "alice").filter { $0.hasPrefix("match") } == ["match", "match"])

        // Turning off ends both of carol's matches, told to each side once.
        try carol.ok("activity_off", ["activity": "Anything"])
        #expect(try notice(alice, "alice", "match_ended")["reason"] as? String == "off")
        #expect(try notice(bob, "bob", "match_ended")["user"] as? String == "carol")
        #expect(try notice(carol, "carol", "match_ended")["activity"] as? String == "Coffee")
        #expect(try notice(carol, "carol", "match_ended")["activity"] as? String == "Coffee")
        for (name, client) in [("alice", alice), ("bob", bob), ("carol", carol)] { try expectSilence(client, name) }
    }

    @Test func aStatusExpiresAndItsMatchEndsWithEvents() async throws {
        let server = try await startHuddle()
        let users = try friends(["alice", "bob"], port: server.port)
        let (alice, bob) = (users["alice"]!.client, users["bob"]!.client)
        try bob.ok("activity_on", ["activity": "Study"])
        try alice.ok("activity_on", ["activity": "Study", "expires_in": 1])
        _ = try notice(alice, "alice", "match")
        _ = try notice(bob, "bob", "match")
        let ended = try notice(bob, "bob", "match_ended", timeout: 5)
        #expect(JSON.text(ended) == JSON.text(["user": "alice", "activity": "Study", "reason": "expired"]))
        #expect(try notice(alice, "alice", "match_ended", timeout: 5)["reason"] as? String == "expired")
        #expect((try alice.ok("activities")["mine"] as? [JSONObject])?.isEmpty == true)
        #expect(try alice.errorCode("activity_off", ["activity": "Study"]) == "not_on", "an expired status is off")
        #expect(try matchList(bob) == [])
        #expect((try bob.ok("activities")["mine"] as? [JSONObject])?.count == 1)
    }

    @Test func unfriendingEndsTheMatch() async throws {
        let server = try await startHuddle()
        let users = try friends(["alice", "bob"], port: server.port)
        let (alice, bob) = (users["alice"]!.client, users["bob"]!.client)
        try alice.ok("activity_on", ["activity": "Movie", "friends": ["bob"]])
        try bob.ok("activity_on", ["activity": "Anything"])
        _ = try notice(alice, "alice", "match")
        _ = try notice(bob, "bob", "match")
        try alice.ok("friend_remove", ["user": "bob"])
        _ = try notice(bob, "bob", "friend_removed")
        #expect(JSON.text(try notice(bob, "bob", "match_ended")) == JSON.text(["user": "alice", "activity": "Movie", "reason": "unfriended"]))
        _ = try notice(alice, "alice", "friend_removed")
        #expect(try notice(alice, "alice", "match_ended")["reason"] as? String == "unfriended")
        // alice's chosen audience no longer names bob; the status stays on.
        let mine = try #require(try alice.ok("activities")["mine"] as? [JSONObject])
        #expect(mine.count == 1 && (mine[0]["audience"] as? [String]) == [])
        #expect(try matchList(alice) == [] && matchList(bob) == [])
    }

    @Test func theListComesFromTheCommandLine() async throws {
        let server = try await startHuddle(["--activities", "Tea, Chess ,anything"])
        let users = try friends(["alice", "bob"], port: server.port)
        let (alice, bob) = (users["alice"]!.client, users["bob"]!.client)
        #expect(try alice.ok("activities")["available"] as? [String] == ["Tea", "Chess", "anything"])
        #expect(try alice.errorCode("activity_on", ["activity": "Coffee"]) == "unknown_activity")
        try alice.ok("activity_on", ["activity": "ANYTHING"])
        try bob.ok("activity_on", ["activity": "chess"])
        #expect(try notice(alice, "alice", "match")["activity"] as? String == "Chess")

        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        for bad in ["Gym,gym", "", "Gym,,Eat", String(repeating: "x", count: 33)] {
            guard case .exited(let status, let log) = try await DurableServer.launch(["--activities", bad], dataDirectory: data) else {
                Issue.record("--activities \"\(bad)\" was accepted")
                continue
            }
            #expect(status != 0 && log.contains("--activities"), "\(log)")
        }
    }

    /// Statuses, matches and their `since` survive a restart, graceful (snapshot) or killed
    /// (log replay); a match in force is not told again; a status that ran out while the
    /// server was down is cleared, with its notices, by the restarted server.
    @Test(arguments: ["graceful", "kill"])
    func everythingSurvivesARestart(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var tokens: [String: String] = [:]
        var aliceMatches: JSONObject = [:]
        do {
            let server = try await startHuddle(dataDirectory: data)
            let users = try friends(["alice", "bob", "carol"], port: server.port)
            tokens = users.mapValues(\.token)
            try users["alice"]!.client.ok("activity_on", ["activity": "Coffee", "friends": ["bob", "carol"]])
            try users["bob"]!.client.ok("activity_on", ["activity": "Coffee"])
            try users["carol"]!.client.ok("activity_on", ["activity": "Anything", "expires_in": 2])
            aliceMatches = try users["alice"]!.client.ok("matches")
            #expect((aliceMatches["matches"] as? [JSONObject])?.count == 2)
            if restart == "graceful" {
                #expect(try await server.stop() == 0)
            } else {
                try await server.kill9()
            }
        }
        try await Task.sleep(for: .seconds(2))

        let server = try await startHuddle(dataDirectory: data)
        // carol first: alice, online after her, hears of no one coming online.
        let carol = try ProtocolClient.authenticated(tokens["carol"]!, port: server.port)
        let alice = try ProtocolClient.authenticated(tokens["alice"]!, port: server.port)
        // carol's Anything ran out: the restarted server's tick ends her two matches.
        let deadline = Date().addingTimeInterval(10)
        while try inboxTypes(carol, "carol").filter({ $0 == "match_ended" }).count < 2 {
            guard Date() < deadline else { throw TestFailure("carol's matches never ended after the restart") }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try inboxTypes(alice, "alice").suffix(3) == ["match", "match", "match_ended"])
        // alice and bob's match is still in force, with its original `since`.
        let kept = (aliceMatches["matches"] as? [JSONObject])?.filter { $0["user"] as? String == "bob" }
        #expect(JSON.text(try alice.ok("matches")["matches"] as Any) == JSON.text(kept as Any))
        let mine = try #require(try alice.ok("activities")["mine"] as? [JSONObject])
        #expect(mine.count == 1 && mine[0]["audience"] as? [String] == ["bob", "carol"])
        // Turning Coffee on again does not tell the match again.
        try alice.subscribe("inbox:alice")
        try alice.ok("activity_on", ["activity": "Coffee"])
        try expectSilence(alice, "alice")
        #expect(try inboxTypes(alice, "alice").filter { $0 == "match" }.count == 2)
    }
}
