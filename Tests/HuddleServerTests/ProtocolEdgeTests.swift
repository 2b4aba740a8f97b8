import ChildProcessExit
import Foundation
import Testing

/// protocol.md at its edges, where a client written from it alone had to guess, over real
/// sockets against the real binary: a push while friends still see the user online, `traveling`
/// decided without a second agreeing fix, `subscribe` with a `since` ahead of the channel,
/// `history` with a `before` of 0 or less, and a session's `device` label never shown back.
@Suite(.ownThread) struct ProtocolEdgeTests {
    /// alice and bob, friends, each with one connection.
    private func friends(port: Int) throws -> (alice: ProtocolClient, bob: ProtocolClient) {
        let (alice, _) = try ProtocolClient.signedUp("alice", port: port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: port)
        try alice.ok("friend_request", ["user": "bob"])
        try bob.ok("friend_accept", ["user": "alice"])
        return (alice, bob)
    }

    /// The push goes by live connections, the presence grace aside: bob's phone, suspended, has
    /// no socket to hear on, so he is pushed at once while alice still sees him online.
    @Test func aPushGoesOutAtOnceWhileFriendsStillSeeTheUserOnline() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let server = try await startHuddle(["--presence-grace", "600", "--push-webhook", receiver.url])
        let (alice, bob) = try friends(port: server.port)
        // Logging out forgets bob's connection before the reply: from then on he has none.
        try bob.ok("logout")
        try alice.publish("chat:alice~bob", ["text": "still there?"])
        let pushed = try #require(try await receiver.waitForRequests(1).first?.json)
        #expect(pushed["kind"] as? String == "chat_message" && pushed["user"] as? String == "bob")
        let listed = try #require(try alice.ok("friends")["friends"] as? [JSONObject])
        #expect(listed.map { $0["username"] as? String } == ["bob"])
        #expect(JSON.bool(listed.first?["online"]) == true, "within the grace period bob is still online to his friends")
    }

    /// Moving fast needs no second agreeing fix: the fix that completes the evidence (two fast
    /// intervals and their span, three fixes) decides `traveling` alone. Arriving at a place
    /// from `traveling` does need the fix before to have entered it too.
    @Test func travelingIsDecidedByTheThirdFastFixAndArrivingNeedsTwo() async throws {
        let server = try await startHuddle()
        let (driver, _) = try ProtocolClient.signedUp("driver", port: server.port)
        try driver.setPlace("shop", latitude: SimulatedWalk.originLatitude, longitude: SimulatedWalk.longitude(east: 3_000), radius: 100)
        let start = JSON.nowMilliseconds - 10 * 60_000
        func fix(east: Double, at second: Int) throws -> (place: String?, changed: Bool?) {
            let result = try driver.ok("location_fix", [
                "lat": SimulatedWalk.originLatitude, "lon": SimulatedWalk.longitude(east: east), "accuracy": 10,
                "time": start + second * 1_000,
            ])
            return (result["place"] as? String, JSON.bool(result["changed"]))
        }
        // 20 m/s east, a fix every 10 s: 200 m apart, far beyond both accuracies.
        let first = try fix(east: 0, at: 0)
        #expect(first.place == "unknown")
        let second = try fix(east: 200, at: 10)
        #expect(second.place == "unknown" && second.changed == false, "one fast interval is not yet a journey")
        let third = try fix(east: 400, at: 20)
        #expect(third.place == "traveling" && third.changed == true, "the third fix decides alone")
        // Still fast 200 m short of the shop; then slowly in: the first fix inside it (its previous
        // fix was outside) is still on the way, the second arrives.
        #expect(try fix(east: 2_800, at: 200).place == "traveling")
        let arriving = try fix(east: 3_000, at: 400)
        #expect(arriving.place == "traveling" && arriving.changed == false, "\(arriving)")
        let arrived = try fix(east: 3_000, at: 410)
        #expect(arrived.place == "shop" && arrived.changed == true, "\(arrived)")
    }

    /// A `since` past the channel's newest offset (a position from the future, or from before a
    /// data directory was restored) is not recovered; the subscription holds all the same.
    @Test func aSinceAheadOfTheNewestOffsetIsNotRecovered() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        _ = try alice.publishAll("room:lobby", ["a", "b", "c"])
        let epoch = try #require(try alice.ok("history", ["channel": "room:lobby"])["epoch"] as? String)
        let ahead = try alice.subscribe("room:lobby", since: (epoch, 7))
        #expect(JSON.bool(ahead["recovered"]) == false)
        #expect((ahead["publications"] as? [Any])?.isEmpty == true)
        #expect(ahead["epoch"] as? String == epoch && JSON.int(ahead["offset"]) == 3)
        try alice.publish("room:lobby", "d")
        #expect(JSON.int(try alice.nextEvent("publication")["offset"]) == 4)
        // At the newest offset exactly: recovered, nothing missed.
        let current = try alice.subscribe("room:lobby", since: (epoch, 4))
        #expect(JSON.bool(current["recovered"]) == true && (current["publications"] as? [Any])?.isEmpty == true)
        // A position ahead of a channel never published to is not the empty position either.
        let empty = try alice.subscribe("room:quiet", since: ("", 2))
        #expect(JSON.bool(empty["recovered"]) == false && JSON.int(empty["offset"]) == 0)
    }

    @Test func historyBeforeZeroOrLessIsABadRequest() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        _ = try alice.publishAll("room:lobby", ["a", "b"])
        for before in [0, -1] {
            let failure = try alice.failure("history", ["channel": "room:lobby", "before": before])
            #expect(failure["code"] as? String == "bad_request" && failure["message"] as? String == "before must be a positive integer")
        }
    }

    /// The `device` label is kept with the session and shown by nothing on the wire.
    @Test func theDeviceLabelIsNeverShownBack() async throws {
        let server = try await startHuddle()
        let label = "label-9f3c"
        let signup = try ProtocolClient(port: server.port)
        let signedUp = try signup.ok("signup", ["username": "alice", "email": "alice@example.com", "password": ProtocolClient.password, "device": label])
        let token = try #require(signedUp["token"] as? String)
        let login = try ProtocolClient(port: server.port)
        let loggedIn = try login.ok("login", ["login": "alice", "password": ProtocolClient.password, "device": label])
        let header = try ProtocolClient(port: server.port, credential: .header(token))
        let session = try header.nextEvent("session")
        let shown = [signedUp, loggedIn, session, try header.ok("whoami"), try ProtocolClient(port: server.port).auth(token)]
        for object in shown {
            #expect(!JSON.text(object).contains(label), "\(JSON.text(object))")
        }
    }
}
