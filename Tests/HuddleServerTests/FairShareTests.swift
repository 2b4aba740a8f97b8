import ChildProcessExit
import Foundation
import Testing

/// Issue 12: what one user (or one address) may cost the server is a share of their own,
/// however many connections they open (protocol.md "Limits", fair shares).
@Suite(.ownThread) struct FairShareTests {
    private static func errorCode(_ reply: JSONObject) -> String? {
        (reply["error"] as? JSONObject)?["code"] as? String
    }

    private static func retryAfter(_ reply: JSONObject) -> Int? {
        JSON.int((reply["error"] as? JSONObject)?["retry_after_ms"])
    }

    /// Problem 1 (the rate half): four connections of one user, each inside its own burst,
    /// share the user's budget of 100 at once (50 a second) instead of getting 100 each.
    @Test func aUsersConnectionsShareOneRequestBudget() async throws {
        let server = try await startHuddle(["--user-rate-limit", "50"])
        let (first, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let clients = try [first] + (0..<3).map { _ in try ProtocolClient(port: server.port, credential: .header(token)) }
        let started = Date()
        var replies: [JSONObject] = []
        for client in clients { replies += try client.pipeline(Array(repeating: ("whoami", [:]), count: 90)) }
        let elapsed = Date().timeIntervalSince(started)
        let allowed = replies.filter { JSON.bool($0["ok"]) == true }.count
        let limited = replies.filter { Self.errorCode($0) == "rate_limited" }
        #expect(allowed + limited.count == replies.count, "every reply is ok or rate_limited")
        // A burst of 100 and 50 a second refilled while the requests were read.
        #expect(allowed <= 100 + Int(elapsed * 50) + 2, "\(allowed) of 360 allowed in \(elapsed) s")
        #expect(limited.allSatisfy { (Self.retryAfter($0) ?? 0) > 0 }, "each refusal says when to retry")
        // Another user's budget is their own.
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        #expect((try bob.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "bob")
        let metrics = try HTTPExchange(port: server.port, "GET", "/metrics").body
        #expect(metrics.contains("huddle_budget_refusals_total{budget=\"requests\"} \(limited.count)"), "\(metrics)")
    }

    /// Problem 1 with retry-safe writes: a write sent with a `client_id` is wrapped for the
    /// core, and must still be paid from its user's request budget like any other request.
    @Test func keyedWritesShareTheRequestBudget() async throws {
        let server = try await startHuddle(["--user-rate-limit", "50"])
        let (first, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let clients = try [first] + (0..<3).map { _ in try ProtocolClient(port: server.port, credential: .header(token)) }
        let started = Date()
        var replies: [JSONObject] = []
        for (index, client) in clients.enumerated() {
            replies += try client.pipeline((0..<90).map { ("activity_off", ["activity": "Coffee", "client_id": "k\(index)-\($0)"]) })
        }
        let elapsed = Date().timeIntervalSince(started)
        let limited = replies.filter { Self.errorCode($0) == "rate_limited" }
        let reachedTheCore = replies.count - limited.count
        #expect(reachedTheCore <= 100 + Int(elapsed * 50) + 2, "\(reachedTheCore) of 360 keyed writes reached the core in \(elapsed) s")
        #expect(limited.allSatisfy { (Self.retryAfter($0) ?? 0) > 0 })
    }

    /// Problem 1, before sign-in: connections from one address share the address's budget.
    @Test func anonymousConnectionsShareTheirAddresssBudget() async throws {
        let server = try await startHuddle(["--user-rate-limit", "50"])
        let clients = try (0..<4).map { _ in try ProtocolClient(port: server.port) }
        let started = Date()
        var replies: [JSONObject] = []
        for client in clients { replies += try client.pipeline(Array(repeating: ("whoami", [:]), count: 90)) }
        let elapsed = Date().timeIntervalSince(started)
        let answered = replies.filter { Self.errorCode($0) == "not_authenticated" }.count
        let limited = replies.filter { Self.errorCode($0) == "rate_limited" }
        #expect(answered + limited.count == replies.count)
        #expect(answered <= 100 + Int(elapsed * 50) + 2, "\(answered) of 360 reached the core in \(elapsed) s")
        #expect(limited.allSatisfy { (Self.retryAfter($0) ?? 0) > 0 })
    }

    /// Problem 3 under the fair shares: an address whose anonymous share is used up (an
    /// attacker's, or a carrier NAT's) still signs its users in, since sign-ins have a lane of
    /// their own; signups and other anonymous requests cannot spend it.
    @Test func anAddressOverItsAnonymousShareStillSignsIn() async throws {
        let server = try await startHuddle(["--user-rate-limit", "50"])
        let (owner, _) = try ProtocolClient.signedUp("alice", port: server.port)
        _ = owner  // stays open: its share is the user's now, not the address's
        let clients = try (0..<4).map { _ in try ProtocolClient(port: server.port) }
        var replies: [JSONObject] = []
        for client in clients { replies += try client.pipeline(Array(repeating: ("whoami", [:]), count: 90)) }
        #expect(replies.contains { Self.errorCode($0) == "rate_limited" }, "the address's anonymous share is used up")
        let login = try ProtocolClient(port: server.port)
        let result = try login.ok("login", ["login": "alice", "password": ProtocolClient.password])
        #expect(result["token"] is String)
    }

    /// Problem 1, bytes published: two connections of one user share 64 KiB at once (16 KiB a
    /// second) of publish data.
    @Test func aUsersConnectionsShareOnePublishedBytesBudget() async throws {
        let server = try await startHuddle(["--user-publish-bytes", "16384"])
        let (first, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let second = try ProtocolClient(port: server.port, credential: .header(token))
        let data = String(repeating: "x", count: 15 * 1024)
        let started = Date()
        var replies: [JSONObject] = []
        for client in [first, second] {
            replies += try client.pipeline(Array(repeating: ("publish", ["channel": "room:big", "data": data]), count: 6))
        }
        let elapsed = Date().timeIntervalSince(started)
        let stored = replies.filter { JSON.bool($0["ok"]) == true }.count
        let limited = replies.filter { Self.errorCode($0) == "rate_limited" }
        #expect(stored + limited.count == replies.count, "\(replies.map(JSON.text))")
        // 4 fit in the burst; about one more per second of refill.
        #expect(stored >= 4 && stored <= 4 + Int(elapsed) + 1, "\(stored) of 12 stored in \(elapsed) s")
        #expect(limited.allSatisfy { (Self.retryAfter($0) ?? 0) > 0 })
        // Only what was accepted was stored.
        #expect(JSON.int(try first.ok("history", ["channel": "room:big", "limit": 1])["offset"]) == stored)
    }

    /// Problem 7: pages read back are paid by size. A user who read a large page is refused
    /// more pages, on any of their connections, until the budget refilled; others read on.
    @Test func pagesReadBackArePaidBySizePerUser() async throws {
        let server = try await startHuddle(["--user-read-bytes", "16384"])
        let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let data = String(repeating: "h", count: 15 * 1024)
        _ = try alice.publishAll("room:pages", Array(repeating: data, count: 8))
        // 8 × 15 KiB: more than the whole burst of 64 KiB, so this page leaves the budget in debt.
        let page = try alice.ok("history", ["channel": "room:pages", "limit": 100])
        #expect((page["publications"] as? [Any])?.count == 8)
        let second = try ProtocolClient(port: server.port, credential: .header(token))
        let refused = try second.request("history", ["channel": "room:pages", "limit": 1])
        #expect(Self.errorCode(refused) == "rate_limited", "\(JSON.text(refused))")
        let wait = try #require(Self.retryAfter(refused))
        #expect(wait > 0 && wait <= 8_000, "\(wait) ms")
        // Other requests, and other users, are not held back by alice's reading.
        #expect(JSON.int(try alice.publish("room:pages", "more")["offset"]) == 9)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        #expect((try bob.ok("history", ["channel": "room:pages", "limit": 100])["publications"] as? [Any])?.count == 9)
        // After the advised wait alice reads again.
        try await Task.sleep(for: .milliseconds(wait + 50))
        #expect(JSON.int(try second.ok("history", ["channel": "room:pages", "limit": 1])["offset"]) == 9)
        let metrics = try HTTPExchange(port: server.port, "GET", "/metrics").body
        #expect(metrics.contains("huddle_budget_refusals_total{budget=\"read_bytes\"} "), "\(metrics)")
        #expect(!metrics.contains("huddle_budget_refusals_total{budget=\"read_bytes\"} 0"), "\(metrics)")
    }

    /// Problem 7, pipelined: reads that reach the core together are each charged before the
    /// next is let in, so a burst of page requests gets one page past the budget, not all.
    @Test func pipelinedPagesAreChargedOneByOne() async throws {
        let server = try await startHuddle(["--user-read-bytes", "16384"])
        let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
        _ = try alice.publishAll("room:pages", Array(repeating: String(repeating: "p", count: 15 * 1024), count: 8))
        let second = try ProtocolClient(port: server.port, credential: .header(token))
        _ = try second.nextEvent("session")
        let replies = try second.pipeline(Array(repeating: ("history", ["channel": "room:pages", "limit": 100] as JSONObject), count: 6))
        #expect(replies.filter { JSON.bool($0["ok"]) == true }.count == 1, "\(replies.map { Self.errorCode($0) ?? "ok" })")
        #expect(replies.dropFirst().allSatisfy { Self.errorCode($0) == "rate_limited" })
    }

    /// Problem 8, rooms: a user creates at most 100 rooms at once; the existing ones stay
    /// usable, and another user still creates rooms.
    @Test func roomsCreatedPerUserAreBounded() async throws {
        let server = try await startHuddle(["--rate-limit", "1000"])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let created = try alice.pipeline((1...100).map { ("publish", ["channel": "room:r\($0)", "data": 1]) })
        #expect(created.allSatisfy { JSON.bool($0["ok"]) == true })
        let refused = try alice.request("publish", ["channel": "room:r101", "data": 1])
        #expect(Self.errorCode(refused) == "too_many_rooms", "\(JSON.text(refused))")
        #expect((Self.retryAfter(refused) ?? 0) > 0)
        #expect(JSON.int(try alice.ok("history", ["channel": "room:r101"])["offset"]) == 0, "nothing was created")
        #expect(JSON.int(try alice.publish("room:r1", 2)["offset"]) == 2, "an existing room takes publications")
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        #expect(JSON.int(try bob.publish("room:r101", 1)["offset"]) == 1)
    }

    /// Problem 8, bytes: what one user publishes to rooms is bounded (here 64 KiB at once).
    @Test func bytesStoredInRoomsPerUserAreBounded() async throws {
        let server = try await startHuddle(["--room-bytes-per-user", "262144"])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let data = String(repeating: "s", count: 15 * 1024)
        let replies = try alice.pipeline((1...6).map { ("publish", ["channel": "room:s\($0)", "data": data]) })
        let stored = replies.filter { JSON.bool($0["ok"]) == true }.count
        #expect(stored == 4, "\(replies.map(JSON.text))")
        let refused = replies.filter { Self.errorCode($0) == "storage_quota" }
        #expect(refused.count == 2 && refused.allSatisfy { (Self.retryAfter($0) ?? 0) > 0 }, "\(replies.map(JSON.text))")
        #expect(JSON.int(try alice.ok("history", ["channel": "room:s6"])["offset"]) == 0, "nothing was stored")
    }

    /// Problem 2: strangers looping friend_request / friend_cancel cannot flush a user's inbox.
    /// Before the bounds, 4 × 130 loops put 1040 notices in it and evicted the friend_accepted
    /// notice at offset 1 (the inbox keeps 1000).
    @Test func strangersCannotFlushAnInbox() async throws {
        let server = try await startHuddle(["--rate-limit", "1000"])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (friend, _) = try ProtocolClient.signedUp("friend", port: server.port)
        try friend.ok("friend_request", ["user": "alice"])
        try alice.ok("friend_accept", ["user": "friend"])
        let firstNotices = JSON.int(try alice.ok("history", ["channel": "inbox:alice", "limit": 1])["offset"]) ?? 0
        var refusals: [JSONObject] = []
        for index in 1...4 {
            let (stranger, _) = try ProtocolClient.signedUp("stranger\(index)", port: server.port)
            let loop = Array(repeating: [("friend_request", ["user": "alice"] as JSONObject), ("friend_cancel", ["user": "alice"])], count: 130)
            let replies = try stranger.pipeline(loop.flatMap { $0 })
            refusals += replies.filter { JSON.bool($0["ok"]) != true }
        }
        let codes = Set(refusals.compactMap(Self.errorCode))
        #expect(codes.isSubset(of: ["request_cooldown", "friend_requests_limited", "no_request"]), "\(codes)")
        #expect(refusals.filter { Self.errorCode($0) == "request_cooldown" }.allSatisfy { (Self.retryAfter($0) ?? 0) > 0 })
        // Each stranger got one request (and its cancel) in; the cooldown refused the rest.
        let inbox = try alice.ok("history", ["channel": "inbox:alice", "limit": 100])
        #expect(JSON.int(inbox["offset"]) == firstNotices + 8, "\(JSON.text(inbox))")
        let oldest = try alice.ok("history", ["channel": "inbox:alice", "before": firstNotices + 1, "limit": firstNotices])
        let types = (oldest["publications"] as? [JSONObject])?.compactMap { $0["type"] as? String }
        #expect(types == ["friend_accepted", "friend_request"], "\(JSON.text(oldest))")
    }

    /// Problem 2 with many accounts: a user receives at most 15 requests at once (15 a day), so
    /// strangers cannot fill her inbox by each asking once.
    @Test func manyStrangersShareTheRecipientsBudget() async throws {
        let server = try await startHuddle()
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        var codes: [String] = []
        for index in 1...17 {
            let (stranger, _) = try ProtocolClient.signedUp("sybil\(index)", port: server.port)
            let reply = try stranger.request("friend_request", ["user": "alice"])
            if JSON.bool(reply["ok"]) == true {
                codes.append("ok")
                try stranger.ok("friend_cancel", ["user": "alice"])
            } else {
                codes.append(Self.errorCode(reply) ?? JSON.text(reply))
                #expect((Self.retryAfter(reply) ?? 0) > 0)
            }
        }
        #expect(codes == Array(repeating: "ok", count: 15) + ["friend_requests_limited", "friend_requests_limited"])
        #expect(JSON.int(try alice.ok("history", ["channel": "inbox:alice", "limit": 1])["offset"]) == 30)
    }

    /// The token of an upgrade is not a request: an address over its share still gets its
    /// connections signed in (and their requests then count against the user).
    @Test func anUpgradeTokenIsNotRefusedWhenTheAddressIsOverItsShare() async throws {
        let server = try await startHuddle(["--user-rate-limit", "1"])
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let anonymous = try ProtocolClient(port: server.port)
        let replies = try anonymous.pipeline(Array(repeating: ("whoami", [:]), count: 5))
        #expect(replies.contains { Self.errorCode($0) == "rate_limited" }, "the address is over its share")
        let signedIn = try ProtocolClient(port: server.port, credential: .header(token))
        #expect(try signedIn.nextEvent("session")["user"] != nil)
        #expect((try signedIn.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "alice")
    }
}
