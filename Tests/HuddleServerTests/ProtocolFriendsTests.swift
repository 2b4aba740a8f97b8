import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Friends", over real sockets against the real binary: search, requests and
/// their answers, the refusals, inbox notices on both sides, presence and loc: rights that
/// follow friendship, and all of it across a restart.
@Suite(.ownThread) struct ProtocolFriendsTests {
    /// Signs up each name and subscribes it to its own inbox.
    private func signUpAll(_ names: [String], port: Int) throws -> [String: (client: ProtocolClient, token: String)] {
        var users: [String: (ProtocolClient, String)] = [:]
        for name in names {
            let (client, token) = try ProtocolClient.signedUp(name, port: port)
            try client.subscribe("inbox:\(name)")
            users[name] = (client, token)
        }
        return users
    }

    /// The next event must be a publication on `channel` of `type`; returns its data.
    private func notice(_ client: ProtocolClient, _ channel: String, _ type: String) throws -> JSONObject {
        let event = try client.nextEvent("publication")
        guard event["channel"] as? String == channel, event["type"] as? String == type, JSON.isNull(event["from"]),
              let data = event["data"] as? JSONObject
        else { throw TestFailure("expected a \(type) notice on \(channel), got \(JSON.text(event))") }
        return data
    }

    @Test func searchFindsUsersByPrefix() async throws {
        let server = try await startHuddle()
        let users = try signUpAll(["alice", "bob", "bobby", "carol"], port: server.port)
        let alice = users["alice"]!.client
        #expect(try alice.ok("user_search", ["prefix": "BO"])["users"] as? [String] == ["bob", "bobby"])
        #expect(try alice.ok("user_search", ["prefix": "b", "limit": 1])["users"] as? [String] == ["bob"])
        #expect(try alice.ok("user_search", ["prefix": "a"])["users"] as? [String] == [], "the caller is left out")
        #expect(try alice.errorCode("user_search", ["prefix": ""]) == "bad_request")
        #expect(try alice.errorCode("user_search", ["prefix": "b", "limit": 51]) == "bad_request")
        #expect(try ProtocolClient(port: server.port).errorCode("user_search", ["prefix": "b"]) == "not_authenticated")
    }

    @Test func requestAcceptAndTheRefusals() async throws {
        let server = try await startHuddle()
        let users = try signUpAll(["alice", "bob"], port: server.port)
        let alice = users["alice"]!.client
        let bob = users["bob"]!.client

        #expect(try alice.errorCode("friend_request", ["user": "nobody"]) == "user_not_found")
        #expect(try alice.errorCode("friend_request", ["user": "Alice"]) == "self_request")
        #expect(try alice.errorCode("friend_request", ["user": "bob", "message": String(repeating: "x", count: 201)]) == "bad_request")
        #expect(try alice.ok("friend_request", ["user": "bob", "message": "coffee? \"now\" ☕"])["status"] as? String == "requested")
        #expect(try alice.errorCode("friend_request", ["user": "bob"]) == "already_requested")
        let expected: JSONObject = ["from": "alice", "to": "bob", "message": "coffee? \"now\" ☕"]
        #expect(JSON.text(try notice(bob, "inbox:bob", "friend_request")) == JSON.text(expected))
        #expect(JSON.text(try notice(alice, "inbox:alice", "friend_request")) == JSON.text(expected))

        let lists = try bob.ok("friend_requests")
        let incoming = try #require(lists["incoming"] as? [JSONObject])
        #expect(incoming.count == 1 && incoming[0]["user"] as? String == "alice" && incoming[0]["message"] as? String == "coffee? \"now\" ☕")
        #expect(JSON.int(incoming[0]["time"]) != nil)
        #expect((lists["outgoing"] as? [JSONObject])?.isEmpty == true)
        #expect((try alice.ok("friend_requests")["outgoing"] as? [JSONObject])?.first?["user"] as? String == "bob")

        #expect(try alice.errorCode("friend_accept", ["user": "bob"]) == "no_request", "only the recipient accepts")
        #expect(try bob.ok("friend_accept", ["user": "alice"]).isEmpty)
        #expect(try notice(bob, "inbox:bob", "friend_accepted")["from"] as? String == "alice")
        // Friends hear of each other's presence; both are online now.
        let presence = try bob.nextEvent("presence")
        #expect(presence["user"] as? String == "alice" && JSON.bool(presence["online"]) == true)
        #expect(try notice(alice, "inbox:alice", "friend_accepted")["to"] as? String == "bob")
        #expect(try alice.nextEvent("presence")["user"] as? String == "bob")

        let friends = try #require(try alice.ok("friends")["friends"] as? [JSONObject])
        #expect(friends.count == 1 && friends[0]["username"] as? String == "bob" && JSON.bool(friends[0]["online"]) == true)
        #expect(try alice.errorCode("friend_request", ["user": "bob"]) == "already_friends")
        #expect(try bob.errorCode("friend_request", ["user": "alice"]) == "already_friends")

        // Friendship opens loc: channels; going offline is told to the friend after the grace.
        try bob.subscribe("loc:alice")
        shutdown(alice.raw.fd, Int32(SHUT_RDWR))
        let offline = try bob.nextEvent("presence", timeout: 15)
        #expect(offline["user"] as? String == "alice" && JSON.bool(offline["online"]) == false)
    }

    @Test func crossingRequestsDeclineCancelAndRemove() async throws {
        let server = try await startHuddle()
        let users = try signUpAll(["alice", "bob", "carol"], port: server.port)
        let alice = users["alice"]!.client
        let bob = users["bob"]!.client
        let carol = users["carol"]!.client

        try alice.ok("friend_request", ["user": "carol"])
        #expect(try carol.ok("friend_request", ["user": "alice", "message": "you too"])["status"] as? String == "friends")
        #expect((try carol.ok("friends")["friends"] as? [JSONObject])?.map { $0["username"] as? String } == ["alice"])
        #expect((try carol.ok("friend_requests")["incoming"] as? [JSONObject])?.isEmpty == true)

        try bob.ok("friend_request", ["user": "carol"])
        #expect(try carol.ok("friend_decline", ["user": "bob"]).isEmpty)
        #expect(try carol.errorCode("friend_decline", ["user": "bob"]) == "no_request")
        try bob.ok("friend_request", ["user": "alice"])
        #expect(try bob.ok("friend_cancel", ["user": "alice"]).isEmpty)
        #expect(try bob.errorCode("friend_cancel", ["user": "alice"]) == "no_request")
        #expect((try alice.ok("friend_requests")["incoming"] as? [JSONObject])?.isEmpty == true)

        // Removal ends the friendship for both, and with it the right to read loc:.
        try carol.subscribe("loc:alice")
        #expect(try alice.ok("friend_remove", ["user": "carol"]).isEmpty)
        #expect(try alice.errorCode("friend_remove", ["user": "carol"]) == "not_friends")
        #expect(try carol.errorCode("subscribe", ["channel": "loc:alice"]) == "forbidden")
        #expect((try carol.ok("friends")["friends"] as? [JSONObject])?.isEmpty == true)

        // Every step reached bob's inbox, oldest first in history order.
        let history = try bob.ok("history", ["channel": "inbox:bob"])
        let types = (history["publications"] as? [JSONObject])?.reversed().map { $0["type"] as? String ?? "?" }
        #expect(types == ["friend_request", "friend_declined", "friend_request", "friend_cancelled"])
        let carolsInbox = try carol.ok("history", ["channel": "inbox:carol"])
        #expect((carolsInbox["publications"] as? [JSONObject])?.first?["type"] as? String == "friend_removed")
    }

    @Test func friendshipsAndRequestsSurviveARestart() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var tokens: [String: String] = [:]
        do {
            let server = try await startHuddle(dataDirectory: data)
            let users = try signUpAll(["alice", "bob", "carol"], port: server.port)
            tokens = users.mapValues(\.token)
            try users["alice"]!.client.ok("friend_request", ["user": "bob"])
            try users["bob"]!.client.ok("friend_accept", ["user": "alice"])
            try users["carol"]!.client.ok("friend_request", ["user": "bob", "message": "later"])
            #expect(try await server.stop() == 0)
        }
        let server = try await startHuddle(dataDirectory: data)
        let bob = try ProtocolClient.authenticated(tokens["bob"]!, port: server.port)
        let friends = try #require(try bob.ok("friends")["friends"] as? [JSONObject])
        #expect(friends.map { $0["username"] as? String } == ["alice"])
        #expect(JSON.bool(friends[0]["online"]) == false)
        let incoming = try #require(try bob.ok("friend_requests")["incoming"] as? [JSONObject])
        #expect(incoming.map { $0["user"] as? String } == ["carol"] && incoming[0]["message"] as? String == "later")
        #expect(try bob.errorCode("friend_request", ["user": "alice"]) == "already_friends")
        // The search index is rebuilt from the durable accounts.
        #expect(try bob.ok("user_search", ["prefix": "ca"])["users"] as? [String] == ["carol"])
        // The friendship still grants loc: and the notices are still in the inbox.
        try bob.subscribe("loc:alice")
        let inbox = try bob.ok("history", ["channel": "inbox:bob"])
        #expect((inbox["publications"] as? [JSONObject])?.map { $0["type"] as? String ?? "?" } == ["friend_request", "friend_accepted", "friend_request"])
    }
}
