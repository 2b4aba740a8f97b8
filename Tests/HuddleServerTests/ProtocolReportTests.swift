import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Reports", over real sockets against the real binary: a user reports a user, a
/// chat message, a post and a comment; the content is captured as it was; the operator lists
/// (filtered, paged) and resolves them through the HTTP API, and each new one reaches the
/// report webhook (retried when it fails); the refusals, the rate limit, and all of it across a
/// restart, graceful or SIGKILL.
@Suite(.ownThread) struct ProtocolReportTests {
    static let key = "test-api-key-0123456789"

    private func reports(_ port: Int, _ query: String = "") throws -> (ids: [Int], page: JSONObject) {
        let response = try HTTPExchange(port: port, "GET", "/api/v1/reports" + query, key: Self.key)
        guard response.status == 200, let page = response.json else { throw TestFailure("GET reports\(query): \(response.status) \(response.body)") }
        return ((page["reports"] as? [JSONObject] ?? []).compactMap { JSON.int($0["id"]) }, page)
    }

    private func resolve(_ port: Int, _ id: Int, _ body: String) throws -> HTTPExchange {
        try HTTPExchange(port: port, "POST", "/api/v1/reports/\(id)/resolve", body: body, key: Self.key)
    }

    /// alice and bob, friends; bob wrote to alice, posted twice and commented on alice's post.
    private func story(port: Int) throws -> (alice: ProtocolClient, aliceToken: String, bob: ProtocolClient, posts: (alices: Int, bobs: Int, bobsSecond: Int)) {
        let (alice, aliceToken) = try ProtocolClient.signedUp("alice", port: port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: port)
        try alice.ok("friend_request", ["user": "bob"])
        try bob.ok("friend_accept", ["user": "alice"])
        try bob.publish("chat:alice~bob", ["text": "you are awful"])
        func post(_ client: ProtocolClient, _ text: String) throws -> Int {
            try #require(JSON.int((try client.ok("post", ["text": text])["post"] as? JSONObject)?["id"]))
        }
        let alices = try post(alice, "my day")
        let bobs = try post(bob, "buy now")
        let bobsSecond = try post(bob, "buy again")
        try bob.ok("comment", ["post": alices, "text": "rude"])
        return (alice, aliceToken, bob, (alices, bobs, bobsSecond))
    }

    @Test func reportsOfEveryKindReachTheOperatorWithTheirContentAndTheWebhook() async throws {
        let receiver = try WebhookReceiver(statuses: [503])
        defer { receiver.stop() }
        let server = try await startHuddle(["--api-key", Self.key, "--report-webhook", receiver.url])
        try await server.waitForLog("report gateway enabled")
        let (alice, _, bob, posts) = try story(port: server.port)

        #expect(JSON.int(try alice.ok("report", ["kind": "user", "user": "Bob", "reason": "harassment", "text": "keeps at it"])["report"]) == 1)
        #expect(JSON.int(try alice.ok("report", ["kind": "message", "channel": "chat:alice~bob", "offset": 1, "reason": "harassment"])["report"]) == 2)
        #expect(JSON.int(try alice.ok("report", ["kind": "post", "post": posts.bobs, "reason": "spam"])["report"]) == 3)
        #expect(JSON.int(try alice.ok("report", ["kind": "comment", "post": posts.alices, "comment": 1, "reason": "hate"])["report"]) == 4)
        // Reporting a user's post after blocking them is allowed: it is out of the feed, not forgotten.
        try alice.ok("block", ["user": "bob"])
        #expect(JSON.int(try alice.ok("report", ["kind": "post", "post": posts.bobsSecond, "reason": "spam"])["report"]) == 5)

        // The refusals.
        #expect(try alice.errorCode("report", ["kind": "post", "post": posts.bobs, "reason": "spam"]) == "already_reported")
        #expect(try alice.errorCode("report", ["kind": "user", "user": "alice", "reason": "spam"]) == "self_request")
        #expect(try alice.errorCode("report", ["kind": "user", "user": "nobody", "reason": "spam"]) == "user_not_found")
        #expect(try alice.errorCode("report", ["kind": "message", "channel": "chat:alice~bob", "offset": 9, "reason": "spam"]) == "content_not_found")
        #expect(try alice.errorCode("report", ["kind": "message", "channel": "chat:bob~carol", "offset": 1, "reason": "spam"]) == "forbidden")
        #expect(try alice.errorCode("report", ["kind": "post", "post": 999, "reason": "spam"]) == "post_not_found")
        #expect(try alice.errorCode("report", ["kind": "comment", "post": posts.alices, "comment": 9, "reason": "spam"]) == "content_not_found")
        #expect(try alice.errorCode("report", ["kind": "photo", "reason": "spam"]) == "bad_request")
        #expect(try alice.errorCode("report", ["kind": "user", "user": "bob", "reason": "boring"]) == "bad_request")
        #expect(try alice.errorCode("report", ["kind": "user", "user": "bob", "reason": "spam", "text": String(repeating: "x", count: 1001)]) == "bad_request")
        #expect(try ProtocolClient(port: server.port).errorCode("report", ["kind": "user", "user": "bob", "reason": "spam"]) == "not_authenticated")

        // What was reported stays as it was, whatever its author does after.
        try bob.ok("post_delete", ["post": posts.bobs])
        let (open, page) = try reports(server.port)
        #expect(open == [1, 2, 3, 4, 5] && JSON.isNull(page["next_after"]))
        let listed = try #require(page["reports"] as? [JSONObject])
        #expect(listed.map { $0["kind"] as? String ?? "?" } == ["user", "message", "post", "comment", "post"])
        #expect(listed.allSatisfy { $0["user"] as? String == "bob" && $0["reporter"] as? String == "alice" && $0["status"] as? String == "open" })
        #expect(listed[0]["text"] as? String == "keeps at it" && JSON.isNull(listed[0]["content"]))
        #expect(listed[1]["content"] as? String == #"{"text":"you are awful"}"# && listed[1]["channel"] as? String == "chat:alice~bob")
        #expect(listed[2]["content"] as? String == "buy now", "kept after the post was deleted")
        #expect(listed[3]["content"] as? String == "rude" && JSON.int(listed[3]["comment"]) == 1)
        #expect(listed.allSatisfy { JSON.int($0["time"]) != nil })

        // Paging and filters.
        let first = try reports(server.port, "?limit=2")
        #expect(first.ids == [1, 2] && JSON.int(first.page["next_after"]) == 2)
        #expect(try reports(server.port, "?after=2&limit=2").ids == [3, 4])
        #expect(try reports(server.port, "?after=4&limit=2").ids == [5])

        // Resolving.
        #expect(try resolve(server.port, 3, #"{"action": "content_removed", "note": "gone"}"#).status == 200)
        let twice = try resolve(server.port, 3, #"{"action": "dismissed"}"#)
        #expect(twice.status == 400 && twice.errorCode == "already_resolved")
        let unknown = try resolve(server.port, 99, #"{"action": "dismissed"}"#)
        #expect(unknown.status == 404 && unknown.errorCode == "report_not_found")
        #expect(try resolve(server.port, 2, #"{"action": "banished"}"#).status == 400)
        #expect(try resolve(server.port, 2, #"{}"#).status == 400)
        let resolved = try reports(server.port, "?status=resolved")
        #expect(resolved.ids == [3])
        let resolution = try #require((resolved.page["reports"] as? [JSONObject])?.first?["resolution"] as? JSONObject)
        #expect(resolution["action"] as? String == "content_removed" && resolution["note"] as? String == "gone" && JSON.int(resolution["time"]) != nil)
        #expect(try reports(server.port).ids == [1, 2, 4, 5])
        #expect(try reports(server.port, "?status=all").ids == [1, 2, 3, 4, 5])
        #expect(try HTTPExchange(port: server.port, "GET", "/api/v1/reports?status=maybe", key: Self.key).status == 400)
        #expect(try HTTPExchange(port: server.port, "GET", "/api/v1/reports?limit=101", key: Self.key).status == 400)
        #expect(try HTTPExchange(port: server.port, "GET", "/api/v1/reports").status == 401)
        #expect(try HTTPExchange(port: server.port, "POST", "/api/v1/reports", body: "{}", key: Self.key).status == 405)

        // The webhook got each new report once (the first attempt of one was refused 503 and retried).
        let delivered = try await receiver.waitForRequests(6).map(\.json)
        let ids = delivered.compactMap { JSON.int($0["id"]) }
        #expect(ids.sorted() == [1, 1, 2, 3, 4, 5] || Set(ids) == [1, 2, 3, 4, 5] && ids.count == 6, "\(ids)")
        let webhookPost = try #require(delivered.last { JSON.int($0["id"]) == 3 })
        #expect(webhookPost["content"] as? String == "buy now" && webhookPost["kind"] as? String == "post" && webhookPost["status"] as? String == "open")
        #expect(try await server.stop() == 0)
    }

    @Test func reportsAreRateLimitedPerReporter() async throws {
        let server = try await startHuddle(["--api-key", Self.key])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        let offsets = try bob.publishAll("room:lobby", (1...11).map { ["n": $0] })
        for offset in offsets.prefix(10) {
            try alice.ok("report", ["kind": "message", "channel": "room:lobby", "offset": offset, "reason": "spam"])
        }
        let limited = try alice.failure("report", ["kind": "message", "channel": "room:lobby", "offset": offsets[10], "reason": "spam"])
        #expect(limited["code"] as? String == "reports_limited")
        #expect((JSON.int(limited["retry_after_ms"]) ?? 0) > 0, "\(limited)")
        // Another reporter has a budget of their own.
        #expect(JSON.int(try bob.ok("report", ["kind": "user", "user": "alice", "reason": "other"])["report"]) == 11)
        #expect(try reports(server.port).ids.count == 11)
        #expect(try await server.stop() == 0)
    }

    /// Reports and resolutions are durable; the counter carries on after a graceful restart or SIGKILL.
    @Test(arguments: ["graceful", "kill"])
    func reportsSurviveARestart(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var aliceToken = ""
        var bobsPost = 0
        do {
            let server = try await DurableServer.start(["--fsync", "always", "--api-key", Self.key], dataDirectory: data)
            let (alice, token, _, posts) = try story(port: server.port)
            aliceToken = token
            bobsPost = posts.bobs
            try alice.ok("report", ["kind": "post", "post": posts.bobs, "reason": "spam"])
            try alice.ok("report", ["kind": "user", "user": "bob", "reason": "other"])
            #expect(try resolve(server.port, 2, #"{"action": "user_warned"}"#).status == 200)
            if restart == "graceful" {
                #expect(try await server.stop() == 0)
            } else {
                server.kill9()
            }
        }
        let server = try await DurableServer.start(["--fsync", "always", "--api-key", Self.key], dataDirectory: data)
        let all = try reports(server.port, "?status=all")
        #expect(all.ids == [1, 2])
        let listed = try #require(all.page["reports"] as? [JSONObject])
        #expect(listed[0]["content"] as? String == "buy now" && listed[0]["status"] as? String == "open")
        #expect((listed[1]["resolution"] as? JSONObject)?["action"] as? String == "user_warned")
        let alice = try ProtocolClient.authenticated(aliceToken, port: server.port)
        #expect(try alice.errorCode("report", ["kind": "post", "post": bobsPost, "reason": "spam"]) == "already_reported")
        #expect(JSON.int(try alice.ok("report", ["kind": "user", "user": "bob", "reason": "spam"])["report"]) == 3, "a resolved report may be made again")
        #expect(try await server.stop() == 0)
    }
}
