import ChildProcessExit
import Foundation
import RedisTestSupport
import Testing

/// Cluster mode's runtime (issue 14): the turn appended to the shared log at P+1, the reader
/// applying other nodes' entries, writes refused while Redis is down, and compare-and-append
/// under contention. Real `redis-server` and real `huddle` nodes (ClusterHarness), over sockets.
@Suite(.ownThread) struct ClusterChatTests {
    /// Friends across nodes without waiting for the request's event: `answerer` accepts as soon
    /// as its node has applied the request made on the other node.
    static func befriend(_ asker: ProtocolClient, _ answerer: ProtocolClient, _ askerName: String, _ answererName: String) async throws {
        try asker.ok("friend_request", ["user": answererName])
        try await untilHolds("\(answererName)'s node has the request") {
            JSON.bool(try answerer.request("friend_accept", ["user": askerName])["ok"]) == true
        }
    }

    static func offsets(_ result: JSONObject) -> [Int] {
        ((result["publications"] as? [JSONObject]) ?? []).compactMap { JSON.int($0["offset"]) }
    }

    @Test func clusterFlagsAreRefusedInPlainWordsAndANodeNameIsHeldByOneLiveNode() async throws {
        let malformed = try ServeFlagTests.refusal(["--redis", "http://127.0.0.1:6379", "--shared-dir", "/tmp"])
        #expect(malformed.status != 0 && malformed.output.contains("--redis: invalid Redis URL"), "\(malformed.output)")
        let noSharedDirectory = try ServeFlagTests.refusal(["--redis", "redis://127.0.0.1:6379"])
        #expect(noSharedDirectory.status != 0 && noSharedDirectory.output.contains("--redis needs --shared-dir DIR"), "\(noSharedDirectory.output)")
        let orphan = try ServeFlagTests.refusal(["--node-name", "a"])
        #expect(orphan.status != 0 && orphan.output.contains("they need --redis"), "\(orphan.output)")

        let cluster = try await ClusterHarness(nodes: 1)
        let started = try #require(try cluster.server(0).logText.split(separator: "\n").first { $0.contains("started") })
        #expect(started.contains("cluster=on (node \(cluster.name(0)), \(cluster.redis.endpoint)/0, shared dir \(cluster.sharedDirectory.path), wait replicas 0)"), "\(started)")
        let twin = try ServeFlagTests.refusal([
            "--redis", cluster.redis.endpoint, "--node-name", cluster.name(0), "--shared-dir", cluster.sharedDirectory.path,
        ])
        #expect(twin.status != 0, "\(twin.output)")
        #expect(twin.output.contains("--node-name \(cluster.name(0)): a live node of the cluster already has this name"), "\(twin.output)")
        #expect((try? HTTPExchange(port: cluster.port(0), "GET", "/healthz"))?.status == 200, "the live node goes on")
    }

    @Test func friendsOnTwoNodesChatLiveThenReadHistoryUnreadAndResumeOnAThird() async throws {
        let cluster = try await ClusterHarness(nodes: 3)
        let (alice, _) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let (bob, bobToken) = try ProtocolClient.signedUp("bob", port: cluster.port(1))
        try await Self.befriend(alice, bob, "alice", "bob")
        let room = "chat:alice~bob"
        try await untilHolds("alice's node knows the friendship") { JSON.bool(try alice.request("subscribe", ["channel": room])["ok"]) == true }
        try bob.subscribe(room)

        let first = try alice.publish(room, ["text": "hi bob"])
        let epoch = try #require(first["epoch"] as? String)
        #expect(JSON.int(first["offset"]) == 1)
        let atBob = try bob.nextPublication(on: room)
        #expect(JSON.int(atBob["offset"]) == 1 && atBob["from"] as? String == "alice", "\(JSON.text(atBob))")
        #expect(JSON.int(try bob.publish(room, ["text": "hi alice"])["offset"]) == 2)
        let atAlice = try alice.nextEvent("bob's reply at offset 2") { $0["channel"] as? String == room && JSON.int($0["offset"]) == 2 }
        #expect(JSON.int(atAlice["offset"]) == 2 && atAlice["from"] as? String == "bob", "\(JSON.text(atAlice))")

        // Bob leaves at offset 2; alice writes on; bob comes back on node 3 and resumes.
        shutdown(bob.raw.fd, Int32(SHUT_RDWR))
        for text in ["three", "four"] { try alice.publish(room, ["text": text]) }
        let bobOnThird = try await ProtocolClient.authenticatedOnceKnown(bobToken, port: cluster.port(2))
        try await cluster.untilHolds("node 3 has applied the log through offset 4") {
            Self.offsets(try bobOnThird.ok("history", ["channel": room, "limit": 10])).first == 4
        }
        let unread = try bobOnThird.ok("unread")
        #expect(JSON.int(unread["total"]) == 2, "bob read up to his own message: \(JSON.text(unread))")
        let resumed = try bobOnThird.subscribe(room, since: (epoch, 2))
        #expect(JSON.bool(resumed["recovered"]) == true && Self.offsets(resumed) == [3, 4], "\(JSON.text(resumed))")
        try alice.publish(room, ["text": "five"])
        #expect(JSON.int(try bobOnThird.nextPublication(on: room)["offset"]) == 5)
    }

    @Test func writesWhileRedisIsDownAnswerUnavailableAndNothingAcknowledgedIsLost() async throws {
        let cluster = try await ClusterHarness(nodes: 2)
        let (alice, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let room = "room:outage"
        var acknowledged = try alice.publishAll(room, (1...5).map { ["n": $0] })

        try await cluster.kill9Redis()
        #expect(try alice.errorCode("publish", ["channel": room, "data": ["n": 6]]) == "unavailable")
        try await untilHolds("/healthz says 503 and the writer is down") {
            let status = (try? HTTPExchange(port: cluster.port(0), "GET", "/healthz"))?.status
            return try status == 503 && cluster.metrics(0).value("huddle_redis_connected") == 0
        }
        #expect(JSON.int(try alice.ok("history", ["channel": room, "limit": 10])["offset"]) == 5, "reads go on from the node's copy")

        try await cluster.restartRedis()
        try await untilHolds("writes are taken again") {
            let reply = try alice.request("publish", ["channel": room, "data": ["n": 7]])
            guard JSON.bool(reply["ok"]) == true else { return false }
            acknowledged.append(try #require(JSON.int((reply["result"] as? JSONObject)?["offset"])))
            return true
        }
        #expect(acknowledged == Array(1...6), "acknowledged offsets follow on without a gap: \(acknowledged)")
        // Signed in once (a second `auth` on the connection is already_authenticated, which no
        // retry could get past), then read until node 2's reader has caught up after the restart.
        let onOther = try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(1))
        try await cluster.untilHolds("node 2 has every acknowledged write") {
            Self.offsets(try onOther.ok("history", ["channel": room, "limit": 10])) == acknowledged.reversed()
        }
    }

    @Test func aWriteWhoseOutcomeWasLostIsUnavailableAndItsRetryIsNotASecondOne() async throws {
        let cluster = try await ClusterHarness(nodes: 1)
        // The lost reply takes the node's Redis reply deadline (5 s) to be given up on.
        let alice = try ProtocolClient(port: cluster.port(0), receiveTimeout: 60)
        try alice.signup("alice")
        let room = "room:lost"
        #expect(JSON.int(try alice.publish(room, ["n": 1])["offset"]) == 1)
        // Redis stops answering: the append is sent, its reply never comes, the node drops the
        // connection after its reply deadline. Whether Redis ran it on waking is unknown.
        cluster.redis.pause()
        let write: JSONObject = ["channel": room, "data": ["n": 2], "client_id": "second"]
        let lost = try alice.request("publish", write)
        cluster.redis.resume()
        #expect((lost["error"] as? JSONObject)?["code"] as? String == "unavailable", "\(JSON.text(lost))")
        var retried: JSONObject = [:]
        try await untilHolds("the retry is taken") {
            let reply = try alice.request("publish", write)
            retried = (reply["result"] as? JSONObject) ?? [:]
            return JSON.bool(reply["ok"]) == true
        }
        #expect(JSON.int(retried["offset"]) == 2, "\(JSON.text(retried))")
        #expect(Self.offsets(try alice.ok("history", ["channel": room, "limit": 10])) == [2, 1], "landed or not, it is there once")
    }

    @Test func aNodeKilledAndRestartedUnderItsNameRebuildsItsCopyFromTheLog() async throws {
        let cluster = try await ClusterHarness(nodes: 2)
        let (alice, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let room = "room:restart"
        _ = try alice.publishAll(room, (1...3).map { ["n": $0] })
        cluster.kill9(node: 1)
        _ = try alice.publishAll(room, (4...6).map { ["n": $0] })
        // Within its dead lease: the start waits for the lease to expire instead of refusing.
        try await cluster.restart(node: 1)
        let onRestarted = try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(1))
        try await cluster.untilHolds("the restarted node has the whole room") {
            Self.offsets(try onRestarted.ok("history", ["channel": room, "limit": 10])) == [6, 5, 4, 3, 2, 1]
        }
        #expect(JSON.int(try onRestarted.publish(room, ["n": 7])["offset"]) == 7, "it writes on top of what it read")
    }

    @Test func withWaitReplicasAWriteNoReplicaHasIsUnavailableAndItsRetryFindsIt() async throws {
        let cluster = try await ClusterHarness(nodes: 1, arguments: ["--redis-wait-replicas", "1"])
        let replica = try await RedisProcess(.replica(of: cluster.redis.port))
        try await untilHolds("the replica is in sync") {
            RedisProbe.command(port: cluster.redis.port, ["INFO", "replication"])?.contains("state=online") == true
        }
        let (alice, _) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let room = "room:replicated"
        #expect(JSON.int(try alice.publish(room, ["n": 0])["offset"]) == 1)

        // The replica stops: the entry is in the primary's log, but the reply must not say ok.
        replica.pause()
        let write: JSONObject = ["channel": room, "data": ["n": 1], "client_id": "first"]
        #expect(try alice.errorCode("publish", write) == "unavailable")
        #expect(try cluster.metrics(0).value("huddle_redis_wait_shortfalls_total") == 1)
        try await untilHolds("the entry is applied all the same") {
            Self.offsets(try alice.ok("history", ["channel": room, "limit": 10])) == [2, 1]
        }
        // Its retry finds the kept result, but no replica has the entry yet: a failover now
        // would lose it, so the retry is not ok either.
        #expect(try alice.errorCode("publish", write) == "unavailable")
        #expect(try cluster.metrics(0).value("huddle_redis_wait_shortfalls_total") == 2)
        replica.resume()
        let retried = try alice.ok("publish", write)
        #expect(JSON.int(retried["offset"]) == 2, "the retry is the first write, not a second one: \(JSON.text(retried))")
        #expect(Self.offsets(try alice.ok("history", ["channel": room, "limit": 10])) == [2, 1])
    }

    @Test func twoNodesWritingOneRoomAtOnceMakeOneContiguousSequence() async throws {
        // Fair shares wide enough for 20 rounds of 40 requests a second on one connection.
        let cluster = try await ClusterHarness(nodes: 2, arguments: ["--rate-limit", "2000", "--user-rate-limit", "2000"])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let (bob, _) = try ProtocolClient.signedUp("bob", port: cluster.port(1))
        let room = "room:race"
        var offsets: [Int] = []
        var rounds = 0
        func conflicts() throws -> Double {
            try cluster.indices.reduce(0) { $0 + (try cluster.metrics($1).value("huddle_cluster_append_conflicts_total") ?? 0) }
        }
        // Both nodes append at once until the log has refused at least one of them.
        while try conflicts() == 0 || rounds == 0 {
            rounds += 1
            try #require(rounds <= 20, "20 rounds of concurrent writes and never a conflict")
            let batch = (0..<40).map { _ in ("publish", ["channel": room, "data": ["round": rounds]] as JSONObject) }
            let aliceIDs = try alice.sendBatch(batch)
            let bobIDs = try bob.sendBatch(batch)
            for reply in try aliceIDs.map(alice.reply(to:)) + bobIDs.map(bob.reply(to:)) {
                offsets.append(try #require(JSON.int((reply["result"] as? JSONObject)?["offset"]), "\(JSON.text(reply))"))
            }
        }
        #expect(offsets.sorted() == Array(1...offsets.count), "one sequence, no gap, no duplicate")
        #expect(try cluster.metrics(0).value("huddle_redis_round_trip_seconds_count", ["command": "append"]) ?? 0 > 0)
        try await untilHolds("both nodes reach the same log position") {
            let positions = try cluster.indices.map { try cluster.metrics($0).value("huddle_cluster_log_position") }
            let lag = try cluster.metrics(0).value("huddle_cluster_log_lag_entries")
            return positions[0] != nil && positions[0] == positions[1] && lag == 0
        }
    }
}
