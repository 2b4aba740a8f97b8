import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Blocking", over real sockets against the real binary: a block undoes the
/// friendship and the requests either way, then hides the two from each other on every path
/// (requests, search, chat, feed, likes and comments on a common friend's posts, presence,
/// places, matches) with the answers the docs give each side; unblock restores nothing; and all
/// of it across a restart, graceful or SIGKILL.
@Suite(.ownThread) struct ProtocolBlockTests {
    /// Signs up every name and subscribes each to its own inbox.
    private func signUpAll(_ names: [String], port: Int) throws -> [String: (client: ProtocolClient, token: String)] {
        var users: [String: (client: ProtocolClient, token: String)] = [:]
        for name in names {
            users[name] = try ProtocolClient.signedUp(name, port: port)
            try users[name]!.client.subscribe("inbox:\(name)")
        }
        return users
    }

    private func befriend(_ first: ProtocolClient, _ firstName: String, _ second: ProtocolClient, _ secondName: String) throws {
        try first.ok("friend_request", ["user": secondName])
        try second.ok("friend_accept", ["user": firstName])
    }

    /// The notice types that reached `user`'s inbox, oldest first.
    private func inboxTypes(_ client: ProtocolClient, _ user: String) throws -> [String] {
        let history = try client.ok("history", ["channel": "inbox:\(user)", "limit": 100])
        return ((history["publications"] as? [JSONObject]) ?? []).reversed().map { $0["type"] as? String ?? "?" }
    }

    private func texts(_ comments: Any?) -> [String] {
        (comments as? [JSONObject] ?? []).compactMap { $0["text"] as? String }
    }

    private func feedTexts(_ client: ProtocolClient) throws -> [String] {
        (try client.ok("feed")["posts"] as? [JSONObject] ?? []).compactMap { $0["text"] as? String }
    }

    @Test func aBlockEndsTheFriendshipAndHidesTheTwoOnEveryPath() async throws {
        let server = try await startHuddle()
        let users = try signUpAll(["alice", "bob", "carol"], port: server.port)
        let (alice, bob, carol) = (users["alice"]!.client, users["bob"]!.client, users["carol"]!.client)
        try befriend(alice, "alice", bob, "bob")
        try befriend(alice, "alice", carol, "carol")
        try befriend(bob, "bob", carol, "carol")
        try bob.publish("chat:alice~bob", ["text": "before"])
        try alice.ok("post", ["text": "alice's"])
        try bob.ok("post", ["text": "bob's"])
        let carolsPost = try #require(JSON.int((try carol.ok("post", ["text": "carol's"])["post"] as? JSONObject)?["id"]))
        try bob.ok("comment", ["post": carolsPost, "text": "from bob"])
        try alice.ok("comment", ["post": carolsPost, "text": "from alice"])
        try bob.ok("like", ["post": carolsPost])
        try alice.ok("activity_on", ["activity": "Coffee"])
        try bob.ok("activity_on", ["activity": "Coffee"])
        #expect((try alice.ok("matches")["matches"] as? [JSONObject])?.count == 1)
        try alice.subscribe("loc:bob")
        _ = try alice.eventsBeforeBarrier()
        _ = try bob.eventsBeforeBarrier()
        _ = try carol.eventsBeforeBarrier()

        #expect(try alice.ok("block", ["user": "Bob"]).isEmpty)
        #expect(try alice.ok("blocks")["users"] as? [String] == ["bob"])
        #expect(try bob.ok("blocks")["users"] as? [String] == [], "a block is the blocker's alone")
        // Bob learns what an unfriending would tell him, no more.
        #expect(try inboxTypes(bob, "bob").suffix(2) == ["friend_removed", "match_ended"])
        #expect((try bob.ok("friends")["friends"] as? [JSONObject])?.compactMap { $0["username"] as? String } == ["carol"])
        #expect((try alice.ok("friends")["friends"] as? [JSONObject])?.compactMap { $0["username"] as? String } == ["carol"])

        // Requests: the blocked side gets what an unknown name gets; the blocker is told why.
        #expect(try bob.errorCode("friend_request", ["user": "alice"]) == "user_not_found")
        #expect(try alice.errorCode("friend_request", ["user": "bob"]) == "user_blocked")
        // Search.
        #expect(try bob.ok("user_search", ["prefix": "a"])["users"] as? [String] == [])
        #expect(try alice.ok("user_search", ["prefix": "b"])["users"] as? [String] == [])
        #expect(try carol.ok("user_search", ["prefix": "b"])["users"] as? [String] == ["bob"])
        // Chat: nobody writes in the room any more; its history stays readable to both.
        #expect(try bob.errorCode("publish", ["channel": "chat:alice~bob", "data": ["text": "after"]]) == "not_friends")
        #expect(try alice.errorCode("publish", ["channel": "chat:alice~bob", "data": ["text": "after"]]) == "not_friends")
        #expect(try bob.errorCode("typing", ["channel": "chat:alice~bob"]) == "not_friends")
        #expect((try alice.ok("history", ["channel": "chat:alice~bob"])["publications"] as? [JSONObject])?.count == 1)
        // Feed: neither sees the other's posts, nor their comments on carol's post.
        #expect(try feedTexts(alice) == ["carol's", "alice's"])
        #expect(try feedTexts(bob) == ["carol's", "bob's"])
        let carolsInAlices = try #require((try alice.ok("feed")["posts"] as? [JSONObject])?.first)
        #expect(texts(carolsInAlices["recent_comments"]) == ["from alice"])
        #expect(JSON.int(carolsInAlices["likes"]) == 1, "a count names no one")
        #expect(texts(try alice.ok("comments", ["post": carolsPost])["comments"]) == ["from alice"])
        #expect(texts(try bob.ok("comments", ["post": carolsPost])["comments"]) == ["from bob"])
        #expect(texts(try carol.ok("comments", ["post": carolsPost])["comments"]) == ["from alice", "from bob"])
        #expect(try bob.errorCode("like", ["post": 1]) == "post_not_found", "alice's post")
        // Live: bob's new comment and like reach carol, never alice.
        _ = try alice.eventsBeforeBarrier()
        _ = try carol.eventsBeforeBarrier()
        try bob.ok("comment", ["post": carolsPost, "text": "again"])
        try bob.ok("like", ["post": carolsPost, "liked": false])
        #expect(try carol.eventsBeforeBarrier().compactMap { $0["event"] as? String } == ["comment", "like"])
        #expect(try alice.eventsBeforeBarrier().isEmpty)
        // Presence, places, matches.
        #expect(try alice.errorCode("where", ["user": "bob"]) == "forbidden")
        #expect(try bob.errorCode("where", ["user": "alice"]) == "forbidden")
        #expect(try bob.errorCode("subscribe", ["channel": "loc:alice"]) == "forbidden")
        try bob.ok("activity_off", ["activity": "Coffee"])
        try bob.ok("activity_on", ["activity": "Coffee"])
        #expect((try alice.ok("matches")["matches"] as? [JSONObject])?.isEmpty == true)
        #expect((try bob.ok("matches")["matches"] as? [JSONObject])?.isEmpty == true)

        // The refusals.
        #expect(try alice.errorCode("block", ["user": "bob"]) == "already_blocked")
        #expect(try alice.errorCode("block", ["user": "alice"]) == "self_request")
        #expect(try alice.errorCode("block", ["user": "nobody"]) == "user_not_found")
        #expect(try alice.errorCode("unblock", ["user": "carol"]) == "not_blocked")
        #expect(try alice.errorCode("block", [:]) == "bad_request")
        #expect(try ProtocolClient(port: server.port).errorCode("blocks") == "not_authenticated")
        // Bob may block alice in turn (he cannot tell that she blocked him).
        #expect(try bob.ok("block", ["user": "alice"]).isEmpty)
        #expect(try bob.ok("unblock", ["user": "alice"]).isEmpty)

        // Unblock restores nothing: no friendship comes back, but they may ask again.
        #expect(try alice.ok("unblock", ["user": "bob"]).isEmpty)
        #expect(try alice.ok("blocks")["users"] as? [String] == [])
        #expect((try alice.ok("friends")["friends"] as? [JSONObject])?.compactMap { $0["username"] as? String } == ["carol"])
        #expect(try bob.ok("user_search", ["prefix": "a"])["users"] as? [String] == ["alice"])
        #expect(try bob.ok("friend_request", ["user": "alice"])["status"] as? String == "requested")
        #expect(try await server.stop() == 0)
    }

    @Test func aBlockDropsPendingRequestsEitherWay() async throws {
        let server = try await startHuddle()
        let users = try signUpAll(["alice", "bob", "dave"], port: server.port)
        let (alice, bob, dave) = (users["alice"]!.client, users["bob"]!.client, users["dave"]!.client)
        try bob.ok("friend_request", ["user": "alice"])
        try alice.ok("friend_request", ["user": "dave"])
        try alice.ok("block", ["user": "bob"])
        try alice.ok("block", ["user": "dave"])
        let lists = try alice.ok("friend_requests")
        #expect((lists["incoming"] as? [JSONObject])?.isEmpty == true && (lists["outgoing"] as? [JSONObject])?.isEmpty == true)
        // What each saw is a decline or a cancel, as if alice had answered so herself.
        #expect(try inboxTypes(bob, "bob") == ["friend_request", "friend_declined"])
        #expect(try inboxTypes(dave, "dave") == ["friend_request", "friend_cancelled"])
        #expect((try bob.ok("friend_requests")["outgoing"] as? [JSONObject])?.isEmpty == true)
        #expect(try bob.errorCode("friend_accept", ["user": "alice"]) == "no_request")
        #expect(try await server.stop() == 0)
    }

    /// Blocks are durable: after a graceful restart (a snapshot) or SIGKILL (the log replayed),
    /// the list and every refusal are as they were, and an unblock before the restart stays undone.
    @Test(arguments: ["graceful", "kill"])
    func blocksSurviveARestart(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var tokens: [String: String] = [:]
        do {
            let server = try await DurableServer.start(["--fsync", "always"], dataDirectory: data)
            let users = try signUpAll(["alice", "bob", "carol"], port: server.port)
            tokens = users.mapValues(\.token)
            try befriend(users["alice"]!.client, "alice", users["bob"]!.client, "bob")
            try users["alice"]!.client.ok("block", ["user": "bob", "client_id": "block-1"])
            try users["alice"]!.client.ok("block", ["user": "carol"])
            try users["alice"]!.client.ok("unblock", ["user": "carol"])
            if restart == "graceful" {
                #expect(try await server.stop() == 0)
            } else {
                server.kill9()
            }
        }
        let server = try await DurableServer.start(["--fsync", "always"], dataDirectory: data)
        let alice = try ProtocolClient.authenticated(tokens["alice"]!, port: server.port)
        let bob = try ProtocolClient.authenticated(tokens["bob"]!, port: server.port)
        #expect(try alice.ok("blocks")["users"] as? [String] == ["bob"])
        #expect((try alice.ok("friends")["friends"] as? [JSONObject])?.isEmpty == true)
        #expect(try bob.errorCode("friend_request", ["user": "alice"]) == "user_not_found")
        #expect(try bob.ok("user_search", ["prefix": "a"])["users"] as? [String] == [])
        // The kept result of the keyed block answers its retry.
        #expect(JSON.bool(try alice.ok("block", ["user": "bob", "client_id": "block-1"])["duplicate"]) == true)
        #expect(try alice.ok("friend_request", ["user": "carol"])["status"] as? String == "requested")
        #expect(try await server.stop() == 0)
    }
}
