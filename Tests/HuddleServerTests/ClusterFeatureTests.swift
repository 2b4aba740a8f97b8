import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// Issue 14, acceptance 1: every feature across nodes. Three `huddle` nodes on one real
/// `redis-server` (ClusterHarness); users on different nodes sign up, befriend, chat (live,
/// history, unread, resume on another node), get one push each, see feed events, matches,
/// place changes, memories on their other device, photos uploaded on another node; presence is
/// global with its grace; logout closes a user's connections on every node; login throttling
/// does not multiply by the node count. Black-box, over sockets: it holds whatever the
/// runtime's internals.
///
/// A node applies what another decided a moment later. Where an event tells a client of it,
/// the test waits for that event; where only a read shows it (another node's copy of the
/// state), the test reads until it shows (`untilHolds`), never sleeps.
@Suite(.ownThread) struct ClusterFeatureTests {
    /// Short presence grace, so "offline after the grace" takes one second.
    static let arguments = ["--presence-grace", "1"]

    /// `asker` asks `answerer` (on another node), who accepts once the request reached them:
    /// friends, each told live through the inbox (both must be subscribed to theirs).
    static func befriend(_ asker: ProtocolClient, _ askerName: String, _ answerer: ProtocolClient, _ answererName: String) throws {
        try asker.ok("friend_request", ["user": answererName])
        let request = try answerer.nextPublication(on: "inbox:\(answererName)", type: "friend_request")
        #expect((request["data"] as? JSONObject)?["from"] as? String == askerName)
        try answerer.ok("friend_accept", ["user": askerName])
        let accepted = try asker.nextPublication(on: "inbox:\(askerName)", type: "friend_accepted")
        #expect((accepted["data"] as? JSONObject)?["to"] as? String == answererName)
    }

    /// `name` signed up on `port`, subscribed to its inbox.
    static func user(_ name: String, port: Int) throws -> (client: ProtocolClient, token: String) {
        let (client, token) = try ProtocolClient.signedUp(name, port: port)
        try client.subscribe("inbox:\(name)")
        return (client, token)
    }

    /// Offsets of the publications in a `subscribe` or `history` result, as listed.
    static func offsets(_ result: JSONObject) -> [Int] {
        ((result["publications"] as? [JSONObject]) ?? []).compactMap { JSON.int($0["offset"]) }
    }

    @Test func friendsChatHistoryUnreadAndResumeOnAnotherNode() async throws {
        let cluster = try await ClusterHarness(arguments: Self.arguments)
        let (alice, aliceToken) = try Self.user("alice", port: cluster.port(0))
        let (bob, bobToken) = try Self.user("bob", port: cluster.port(1))
        try Self.befriend(alice, "alice", bob, "bob")

        // Live both ways: alice on node 1, bob on node 2.
        let room = "chat:alice~bob"
        try alice.subscribe(room)
        try bob.subscribe(room)
        let first = try alice.publish(room, ["text": "hi bob"], type: "message")
        let epoch = try #require(first["epoch"] as? String)
        #expect(JSON.int(first["offset"]) == 1)
        let atBob = try bob.nextPublication(on: room)
        #expect(JSON.int(atBob["offset"]) == 1 && atBob["from"] as? String == "alice" && atBob["epoch"] as? String == epoch)
        #expect((atBob["data"] as? JSONObject)?["text"] as? String == "hi bob")
        #expect(JSON.int(try bob.publish(room, ["text": "hi alice"])["offset"]) == 2)
        let atAlice = try alice.nextEvent("bob's message") { $0["channel"] as? String == room && JSON.int($0["offset"]) == 2 }
        #expect(atAlice["from"] as? String == "bob" && (atAlice["data"] as? JSONObject)?["text"] as? String == "hi alice")

        // History and unread counts from the third node.
        let aliceOnThird = try await ProtocolClient.authenticatedOnceKnown(aliceToken, port: cluster.port(2))
        try await untilHolds("node 3 has both messages") {
            Self.offsets(try aliceOnThird.ok("history", ["channel": room, "limit": 10])) == [2, 1]
        }
        let history = try aliceOnThird.ok("history", ["channel": room, "limit": 10])
        #expect(((history["publications"] as? [JSONObject]) ?? []).map { $0["from"] as? String } == ["bob", "alice"])
        #expect(history["epoch"] as? String == epoch)
        let unread = try aliceOnThird.ok("unread")
        let rooms = (unread["rooms"] as? [JSONObject]) ?? []
        #expect(rooms.count == 1 && rooms.first?["channel"] as? String == room, "\(JSON.text(unread))")
        #expect(JSON.int(rooms.first?["offset"]) == 2 && JSON.int(rooms.first?["read"]) == 1 && JSON.int(unread["total"]) == 1)
        let marked = try aliceOnThird.ok("mark_read", ["channel": room, "offset": 2])
        #expect(JSON.int(marked["unread"]) == 0 && JSON.int(marked["badge"]) == 0)
        try await untilHolds("node 1 sees the read marker node 3 moved") { JSON.int(try alice.ok("unread")["total"]) == 0 }
        #expect(JSON.int(try bob.ok("unread")["total"]) == 0, "a publisher has read what it answers")

        // Resume: bob leaves node 2 at offset 2, misses 3…5, comes back on node 3.
        shutdown(bob.raw.fd, Int32(SHUT_RDWR))
        for text in ["three", "four", "five"] { try alice.publish(room, ["text": text]) }
        let bobOnThird = try await ProtocolClient.authenticatedOnceKnown(bobToken, port: cluster.port(2))
        let resumed = try bobOnThird.subscribe(room, since: (epoch, 2))
        #expect(JSON.bool(resumed["recovered"]) == true, "\(JSON.text(resumed))")
        var seen = Self.offsets(resumed)
        try alice.publish(room, ["text": "six"])
        while seen.last ?? 0 < 6 {
            seen.append(try #require(JSON.int(try bobOnThird.nextPublication(on: room)["offset"])))
        }
        #expect(seen == [3, 4, 5, 6], "no gap, no duplicate across the move: \(seen)")
        let tail = try bobOnThird.eventsBeforeBarrier().filter { $0["channel"] as? String == room }
        #expect(tail.isEmpty, "nothing delivered twice: \(tail.map(JSON.text))")
    }

    @Test func aUserOfflineOnEveryNodeIsPushedOnceAndNeverWhileOnlineElsewhere() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let cluster = try await ClusterHarness(arguments: Self.arguments + ["--push-webhook", receiver.url])
        let (alice, aliceToken) = try Self.user("alice", port: cluster.port(0))
        let (bob, _) = try Self.user("bob", port: cluster.port(1))
        // Node 1 decides whether bob gets a push: it must know bob online on node 2 first. It
        // tells alice so (at the friendship, or when bob's presence reaches it through Redis,
        // whichever is later), in any order with the acceptance notice.
        // The request is sent on bob's node, which knows him online at once: sent from node 1,
        // its push decision could come before bob's presence reached node 1 through Redis (not
        // friends yet, nothing shows when it has), and push the request.
        let aliceOnBobsNode = try await ProtocolClient.authenticatedOnceKnown(aliceToken, port: cluster.port(1))
        try aliceOnBobsNode.ok("friend_request", ["user": "bob"])
        _ = try bob.nextPublication(on: "inbox:bob", type: "friend_request")
        try bob.ok("friend_accept", ["user": "alice"])
        var accepted = false
        var bobOnline: Bool?
        _ = try alice.nextEvent("friend_accepted and presence of bob") { event in
            if event["event"] as? String == "presence", event["user"] as? String == "bob" { bobOnline = JSON.bool(event["online"]) }
            if event["channel"] as? String == "inbox:alice", event["type"] as? String == "friend_accepted" { accepted = true }
            return accepted && bobOnline != nil
        }
        #expect(bobOnline == true)
        let room = "chat:alice~bob"
        try bob.subscribe(room)

        // bob is online on node 2: a message from node 1 reaches him live, not as a push.
        try alice.publish(room, ["text": "while online"])
        _ = try bob.nextPublication(on: room)

        // bob leaves every node; once his friend sees him offline, every node knows.
        shutdown(bob.raw.fd, Int32(SHUT_RDWR))
        #expect(try alice.nextPresence(of: "bob") == false)
        try alice.publish(room, ["text": "are you there?"])
        try await receiver.waitForRequests(1, timeout: 20)
        // A second message from another node, then a barrier: every node's hand-offs done.
        let aliceOnThird = try await ProtocolClient.authenticatedOnceKnown(aliceToken, port: cluster.port(2))
        // Node 3 decides this one: it must have heard that bob left (no event tells a friend
        // who connects later; the friends list shows it).
        try await untilHolds("node 3 knows bob offline") {
            let friends = (try aliceOnThird.ok("friends")["friends"] as? [JSONObject]) ?? []
            return friends.contains { $0["username"] as? String == "bob" && JSON.bool($0["online"]) == false }
        }
        try aliceOnThird.publish(room, ["text": "hello?"])
        try await receiver.waitForRequests(2, timeout: 20)
        try await untilHolds("no webhook request under way on any node") {
            try cluster.indices.allSatisfy { try cluster.metrics($0).value("huddle_push_in_flight") == 0 }
        }
        let pushes = receiver.requests.map(\.json)
        #expect(pushes.compactMap { $0["id"] as? String }.sorted() == ["\(room)/2", "\(room)/3"], "one push each: \(pushes.map(JSON.text))")
        #expect(pushes.allSatisfy { $0["user"] as? String == "bob" && $0["kind"] as? String == "chat_message" && $0["from"] as? String == "alice" })
        #expect(Set(pushes.compactMap { $0["body"] as? String }) == ["are you there?", "hello?"])
    }

    /// alice on node 1 and bob on node 2, friends, each subscribed to their inbox.
    static func friendsOnTwoNodes(_ cluster: ClusterHarness) throws -> (alice: ProtocolClient, bob: ProtocolClient) {
        let (alice, _) = try user("alice", port: cluster.port(0))
        let (bob, _) = try user("bob", port: cluster.port(1))
        try befriend(alice, "alice", bob, "bob")
        return (alice, bob)
    }

    @Test func feedEventsReachFriendsOnOtherNodes() async throws {
        let cluster = try await ClusterHarness(arguments: Self.arguments)
        let (alice, bob) = try Self.friendsOnTwoNodes(cluster)

        // A post on node 1 seen live on node 2, a like on node 2 seen live on node 1.
        let post = try #require(try alice.ok("post", ["text": "gym at 6?", "activity": "Gym"])["post"] as? JSONObject)
        let id = try #require(JSON.int(post["id"]))
        let posted = try bob.nextEvent("post event") { $0["event"] as? String == "post" }
        #expect(JSON.int((posted["post"] as? JSONObject)?["id"]) == id && (posted["post"] as? JSONObject)?["author"] as? String == "alice")
        try bob.ok("like", ["post": id])
        let liked = try alice.nextEvent("like event") { $0["event"] as? String == "like" }
        #expect(JSON.int(liked["post"]) == id && liked["user"] as? String == "bob" && JSON.int(liked["likes"]) == 1)
        let feed = try bob.ok("feed")
        #expect(((feed["posts"] as? [JSONObject]) ?? []).compactMap { JSON.int($0["id"]) } == [id], "\(JSON.text(feed))")
    }

    @Test func statusesOnTwoNodesMatchAndBothAreToldOnce() async throws {
        let cluster = try await ClusterHarness(arguments: Self.arguments)
        let (alice, bob) = try Self.friendsOnTwoNodes(cluster)

        try alice.ok("activity_on", ["activity": "Coffee"])
        try bob.ok("activity_on", ["activity": "coffee"])
        let aliceMatch = try alice.nextPublication(on: "inbox:alice", type: "match")
        #expect(aliceMatch["data"] as? [String: String] == ["user": "bob", "activity": "Coffee"])
        let bobMatch = try bob.nextPublication(on: "inbox:bob", type: "match")
        #expect(bobMatch["data"] as? [String: String] == ["user": "alice", "activity": "Coffee"])
        let matches = (try alice.ok("matches")["matches"] as? [JSONObject]) ?? []
        #expect(matches.map { "\($0["user"] as? String ?? "?") \($0["activity"] as? String ?? "?")" } == ["bob Coffee"])
        let notices = try alice.eventsBeforeBarrier().filter { $0["type"] as? String == "match" }
        #expect(notices.isEmpty, "one match notice, not one per node: \(notices.map(JSON.text))")
    }

    @Test func placeChangesReachAFollowerOnAnotherNode() async throws {
        let cluster = try await ClusterHarness(arguments: Self.arguments)
        let (alice, bob) = try Self.friendsOnTwoNodes(cluster)

        // alice's place, decided on node 1, followed by bob on node 2 — never a coordinate.
        let follow = try bob.subscribe("loc:alice")
        #expect((follow["current"] as? JSONObject)?["place"] as? String == "unknown")
        let home = try alice.setPlace("home", latitude: 48.8566, longitude: 2.3522, radius: 100)
        try alice.ok("location_fix", ["lat": 48.8566, "lon": 2.3522, "accuracy": 10, "time": JSON.nowMilliseconds])
        let arrived = try #require(try bob.nextPublication(on: "loc:alice", type: "place")["data"] as? JSONObject)
        #expect(JSON.int(arrived["place_id"]) == home && arrived["place"] as? String == "home" && arrived["lat"] == nil)
        try alice.ok("place_set", ["place_id": home, "label": "house", "lat": 48.8566, "lon": 2.3522, "radius": 100])
        let renamed = try bob.nextPublication(on: "loc:alice", type: "place")
        #expect((renamed["data"] as? JSONObject)?["place"] as? String == "house")
    }

    @Test func memoryChangesReachTheOwnersOtherDeviceOnAnotherNode() async throws {
        let cluster = try await ClusterHarness(arguments: Self.arguments)
        let (laptop, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let phone = try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(1))

        let created = try laptop.ok("memory_create", ["title": "Lisbon", "date": "2025-06-14"])
        let memory = try #require(JSON.int((created["memory"] as? JSONObject)?["id"]))
        let createdEvent = try phone.nextEvent("memory_changed event") { $0["event"] as? String == "memory_changed" }
        #expect(createdEvent["action"] as? String == "created" && JSON.int(createdEvent["memory_id"]) == memory)
        try laptop.ok("point_add", ["memory": memory, "time": 1_749_900_000_000, "note": "tram 28"])
        let added = try phone.nextEvent("memory_changed event") { $0["event"] as? String == "memory_changed" }
        #expect(added["action"] as? String == "point_added" && (added["point"] as? JSONObject)?["note"] as? String == "tram 28")
        try phone.ok("memory_update", ["memory": memory, "title": "Lisboa"])
        let updated = try laptop.nextEvent("memory_changed event") { $0["event"] as? String == "memory_changed" && $0["action"] as? String == "updated" }
        #expect((updated["memory"] as? JSONObject)?["title"] as? String == "Lisboa")
    }

    @Test func aPhotoUploadedOnOneNodeIsFetchedOnTheOthers() async throws {
        let cluster = try await ClusterHarness(arguments: Self.arguments)
        let (laptop, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let (_, strangerToken) = try ProtocolClient.signedUp("mallory", port: cluster.port(2))

        let bytes = PhotoRequest.photo(7)
        let hash = PhotoRequest.hash(bytes)
        let uploaded = try PhotoRequest.upload(bytes, token: token, port: cluster.port(0))
        #expect(uploaded.status == 201 && uploaded.json?["hash"] as? String == hash, "\(String(decoding: uploaded.body, as: UTF8.self))")
        for node in [1, 2] {
            try await untilHolds("node \(node + 1) serves the photo") {
                try PhotoRequest.download(hash, token: token, port: cluster.port(node)).status == 200
            }
            #expect(try PhotoRequest.download(hash, token: token, port: cluster.port(node)).body == bytes)
        }
        #expect(try PhotoRequest.download(hash, token: strangerToken, port: cluster.port(2)).status == 404, "only owners fetch it")

        // A point on node 1 names it; node 3 shows the point once it has applied it.
        let created = try laptop.ok("memory_create", ["title": "Beach", "date": "2025-08-02"])
        let memory = try #require(JSON.int((created["memory"] as? JSONObject)?["id"]))
        try laptop.ok("point_add", ["memory": memory, "time": 1_754_000_000_000, "photos": [hash]])
        let third = try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(2))
        try await untilHolds("node 3 has the point") {
            JSON.int((try third.ok("memory", ["memory": memory])["memory"] as? JSONObject)?["point_count"]) == 1
        }
        let point = ((try third.ok("memory", ["memory": memory])["memory"] as? JSONObject)?["points"] as? [JSONObject])?.first
        #expect(point?["photos"] as? [String] == [hash])
    }

    @Test func presenceIsGlobalAndWaitsForTheLastConnectionAndTheGrace() async throws {
        let cluster = try await ClusterHarness(arguments: Self.arguments)
        let (alice, aliceToken) = try Self.user("alice", port: cluster.port(0))
        let (bob, _) = try Self.user("bob", port: cluster.port(1))
        try Self.befriend(alice, "alice", bob, "bob")
        #expect(try bob.nextPresence(of: "alice") == true)

        shutdown(alice.raw.fd, Int32(SHUT_RDWR))
        #expect(try bob.nextPresence(of: "alice") == false, "offline after the grace, told on another node")
        let onThird = try ProtocolClient(port: cluster.port(2), credential: .header(aliceToken))
        _ = try onThird.nextEvent("session")
        #expect(try bob.nextPresence(of: "alice") == true, "a connection on node 3 is online for a friend on node 2")
        let friends = (try bob.ok("friends")["friends"] as? [JSONObject]) ?? []
        #expect(friends.count == 1 && JSON.bool(friends.first?["online"]) == true)

        // Two connections on two nodes: online until the last one closes, then the grace.
        let onFirst = try ProtocolClient(port: cluster.port(0), credential: .header(aliceToken))
        _ = try onFirst.nextEvent("session")
        shutdown(onThird.raw.fd, Int32(SHUT_RDWR))
        _ = try onFirst.request("whoami")
        let lastClosed = JSON.nowMilliseconds
        shutdown(onFirst.raw.fd, Int32(SHUT_RDWR))
        let offline = try bob.nextEvent("presence event") { $0["event"] as? String == "presence" && $0["user"] as? String == "alice" }
        #expect(JSON.bool(offline["online"]) == false, "no flap while a connection was left on another node: \(JSON.text(offline))")
        #expect(JSON.int(offline["time"]) ?? 0 >= lastClosed + 1000, "offline only a grace after the last connection closed")
    }

    @Test func logoutOnOneNodeClosesTheUsersConnectionsOnEveryNode() async throws {
        let cluster = try await ClusterHarness(arguments: Self.arguments)
        let (first, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let sameSession = try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(1))
        // Node 3 knows alice once her session is known there: then she logs in on it.
        let sameSessionOnThird = try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(2))
        let otherDevice = try ProtocolClient(port: cluster.port(2))
        let otherToken = try otherDevice.login("alice")
        let otherDeviceElsewhere = try await ProtocolClient.authenticatedOnceKnown(otherToken, port: cluster.port(1))

        #expect(JSON.int(try first.ok("logout", ["all": true])["revoked"]) == 2)
        let revoked = WebSocketCloseCode(rawValue: 4001)
        #expect((try? first.closeCode(timeout: 20)) == revoked, "node 1, the connection that logged out")
        for (name, client) in [
            ("node 2, same session", sameSession), ("node 3, same session", sameSessionOnThird), ("node 3, other session", otherDevice),
            ("node 2, other session", otherDeviceElsewhere),
        ] {
            // A timeout (no close within 20 s) is nil here, so the failure names the connection.
            #expect((try? client.closeCode(timeout: 20)) == revoked, "\(name)")
        }
        for node in cluster.indices {
            try await untilHolds("node \(node + 1) refuses the revoked tokens") {
                let client = try ProtocolClient(port: cluster.port(node))
                return try client.errorCode("auth", ["token": otherToken]) == "invalid_token"
            }
        }
    }

    @Test func loginThrottlingCountsGuessesOnEveryNodeTogether() async throws {
        let cluster = try await ClusterHarness(arguments: Self.arguments)
        let (_, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        for node in cluster.indices { _ = try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(node)) }

        // Five wrong passwords from one address, spread over the three nodes: as many as one
        // node allows (protocol.md, "login"). The sixth, right or wrong, on any node, is refused.
        for node in [0, 1, 2, 0, 1] {
            let guess = try ProtocolClient(port: cluster.port(node)).failure("login", ["login": "alice", "password": "guess-\(node)"])
            #expect(guess["code"] as? String == "invalid_credentials", "\(JSON.text(guess))")
        }
        for node in cluster.indices {
            let refused = try ProtocolClient(port: cluster.port(node)).failure("login", ["login": "alice", "password": ProtocolClient.password])
            #expect(refused["code"] as? String == "too_many_attempts", "node \(node + 1): \(JSON.text(refused))")
            #expect(JSON.int(refused["retry_after_ms"]) ?? 0 > 0)
        }
    }
}
