import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Notifications and push", `match` kind, over real sockets with a local webhook
/// receiver: a user with an activity on and no live connection is pushed when a friend turns
/// the same activity on; the friend, online, is not.
@Suite(.ownThread) struct ProtocolMatchPushTests {
    @Test func anOfflineUserWithAnActivityOnIsPushedTheMatch() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let server = try await startHuddle(["--presence-grace", "0", "--push-webhook", receiver.url])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let bobToken: String
        do {
            let bob = try ProtocolClient(port: server.port)
            bobToken = try bob.signup("bob")
            try alice.ok("friend_request", ["user": "bob"])
            try bob.ok("friend_accept", ["user": "alice"])
            _ = try alice.nextEvent("presence")
            try bob.ok("activity_on", ["activity": "Coffee"])
        }
        // bob's phone went away with Coffee still on.
        let offline = try alice.nextEvent("presence")
        #expect(offline["user"] as? String == "bob" && JSON.bool(offline["online"]) == false)
        #expect(receiver.requests.isEmpty)

        let matched = JSON.nowMilliseconds
        try alice.ok("activity_on", ["activity": "coffee"])
        let pushed = try await receiver.waitForRequests(1)[0].json
        let received = JSON.nowMilliseconds
        // bob's inbox: the friend request (1), its acceptance (2), the match (3).
        #expect(JSON.text(pushed.filter { $0.key != "time" }) == JSON.text([
            "id": "inbox:bob/3", "user": "bob", "kind": "match", "title": "alice", "body": "is up for Coffee too",
            "badge": 0, "target": "huddle://matches", "from": "alice",
        ] as JSONObject))
        // When the match was made: between alice's activity_on and the webhook's receipt.
        #expect(JSON.int(pushed["time"]).map { (matched...received).contains($0) } == true)
        // A message to bob, still offline, as the barrier: a match hand-off to alice would have
        // been made (in alice's activity_on) and sent before it.
        try alice.ok("publish", ["channel": "chat:alice~bob", "data": ["text": "coffee?"]])
        let requests = try await receiver.requestsThrough(marker: { $0["kind"] as? String == "chat_message" }, serverPort: server.port)
        #expect(requests.map { $0.json["user"] as? String } == ["bob", "bob"], "alice, online, is told live and not pushed")

        // What the push told of waits for bob: the match and its notice.
        let bob = try ProtocolClient.authenticated(bobToken, port: server.port)
        let matches = try #require(try bob.ok("matches")["matches"] as? [JSONObject])
        #expect(matches.map { "\($0["user"] as? String ?? "?") \($0["activity"] as? String ?? "?")" } == ["alice Coffee"])
        let inbox = try #require(try bob.ok("history", ["channel": "inbox:bob", "limit": 1])["publications"] as? [JSONObject])
        #expect(inbox.first.map { JSON.int($0["offset"]) == 3 && $0["type"] as? String == "match" } == true)
    }
}
