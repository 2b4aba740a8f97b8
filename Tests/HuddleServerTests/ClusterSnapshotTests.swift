import ChildProcessExit
import Foundation
import RedisTestSupport
import Testing

/// Cluster snapshots as the nodes use them (issue 14, acceptance 4): the snapshotter writes the
/// state into the shared directory between turns and trims the log behind the older kept
/// snapshot; a node that joins, restarts or comes back after the trim starts from the newest
/// snapshot, since the entries it would need are gone. Real `redis-server` and `huddle` nodes.
@Suite(.ownThread) struct ClusterSnapshotTests {
    /// Snapshots every second: a few writes apart, each test sees several.
    static let arguments = ["--snapshot-interval", "1"]

    /// The position of the log's first entry (0: empty), asked of Redis directly.
    static func firstLogPosition(_ cluster: ClusterHarness) throws -> UInt64 {
        guard let reply = RedisProbe.command(port: cluster.redis.port, ["XRANGE", "huddle:log", "-", "+", "COUNT", "1"]) else {
            throw TestFailure("redis did not answer XRANGE")
        }
        return reply.split(separator: "\n").first.flatMap { UInt64($0.split(separator: "-")[0]) } ?? 0
    }

    static func logLength(_ cluster: ClusterHarness) throws -> Int {
        guard let reply = RedisProbe.command(port: cluster.redis.port, ["XLEN", "huddle:log"]), let length = Int(reply) else {
            throw TestFailure("redis did not answer XLEN")
        }
        return length
    }

    /// Publishes one message at a time on `client` until the log's first entry is above
    /// `position + 1`: a snapshot newer than `position` was written and the log trimmed behind
    /// the older kept one. Returns every offset published.
    static func writeUntilTrimmed(past position: UInt64, _ cluster: ClusterHarness, _ client: ProtocolClient, room: String) async throws -> [Int] {
        var offsets: [Int] = []
        try await untilHolds("the log trimmed past position \(position)", timeout: 60) {
            offsets.append(JSON.int(try client.publish(room, ["n": offsets.count + 1])["offset"]) ?? 0)
            return try firstLogPosition(cluster) > position + 1
        }
        return offsets
    }

    static func offsets(_ result: JSONObject) -> [Int] {
        ((result["publications"] as? [JSONObject]) ?? []).compactMap { JSON.int($0["offset"]) }
    }

    /// Every offset of `room` as `client` reads it, newest first, in pages.
    static func history(_ client: ProtocolClient, _ room: String) throws -> [Int] {
        var all: [Int] = []
        while true {
            var arguments: [String: Any] = ["channel": room, "limit": 100]
            if let last = all.last { arguments["before"] = last }
            let page = offsets(try client.ok("history", arguments))
            if page.isEmpty { return all }
            all += page
        }
    }

    @Test func aNodeJoiningAfterTheTrimStartsFromTheSnapshotAndServesTheWholeHistory() async throws {
        let cluster = try await ClusterHarness(nodes: 2, arguments: Self.arguments)
        let (alice, _) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let (bob, bobToken) = try ProtocolClient.signedUp("bob", port: cluster.port(1))
        try await untilHolds("alice's node knows bob") { JSON.bool(try alice.request("friend_request", ["user": "bob"])["ok"]) == true }
        try await untilHolds("bob's node has the request") { JSON.bool(try bob.request("friend_accept", ["user": "alice"])["ok"]) == true }
        let room = "chat:alice~bob"
        try await untilHolds("alice's node knows the friendship") { JSON.bool(try alice.request("subscribe", ["channel": room])["ok"]) == true }
        let published = try await Self.writeUntilTrimmed(past: 1, cluster, alice, room: room)

        let snapshots = try FileManager.default.contentsOfDirectory(atPath: cluster.sharedDirectory.appendingPathComponent("snapshots").path)
        #expect(snapshots.contains { $0.hasPrefix("snapshot-") && $0.hasSuffix(".snap") }, "\(snapshots)")
        let first = try Self.firstLogPosition(cluster)
        let top = try #require(try cluster.metrics(0).value("huddle_cluster_log_position"))
        #expect(try Self.logLength(cluster) <= Int(top) - Int(first) + 1, "the stream holds only what follows the trim")
        let trimmed = try cluster.indices.reduce(0) { $0 + (try cluster.metrics($1).value("huddle_cluster_log_trimmed_total") ?? 0) }
        #expect(trimmed >= Double(first - 1), "the trimmed entries are counted")

        // The sign-ups and the friendship are behind the trim: only the snapshot has them.
        let joined = try await cluster.addNode()
        #expect(try cluster.server(joined).logText.contains("loaded the shared snapshot"), "\(cluster.logs)")
        let bobOnJoined = try ProtocolClient(port: cluster.port(joined))
        try bobOnJoined.ok("auth", ["token": bobToken])
        let friends = try bobOnJoined.ok("friends")
        #expect(JSON.text(friends).contains("alice"), "\(JSON.text(friends))")
        try await untilHolds("the joined node serves every message, exactly once") {
            try Self.history(bobOnJoined, room) == Array(published.reversed())
        }
        let next = try bobOnJoined.publish(room, ["text": "from the new node"])
        #expect(JSON.int(next["offset"]) == published.count + 1, "it writes on top of the whole room")
        #expect(JSON.int(try alice.nextEvent("the new node's message") { $0["channel"] as? String == room && $0["from"] as? String == "bob" }["offset"]) == published.count + 1)
    }

    @Test func aNodeStoppedWhileTheLogIsTrimmedPastItRestartsWithTheCorrectState() async throws {
        let cluster = try await ClusterHarness(nodes: 2, arguments: Self.arguments)
        let (alice, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let room = "room:stopped"
        let before = try alice.publishAll(room, (1...3).map { ["n": $0] })
        try await untilHolds("node 2 has applied the writes") {
            try cluster.metrics(1).value("huddle_cluster_log_position") == cluster.metrics(0).value("huddle_cluster_log_position")
        }
        let stoppedAt = UInt64(try #require(try cluster.metrics(1).value("huddle_cluster_log_position")))
        try await cluster.stop(node: 1)
        let after = try await Self.writeUntilTrimmed(past: stoppedAt, cluster, alice, room: room)

        try await cluster.restart(node: 1)
        let onRestarted = try ProtocolClient(port: cluster.port(1))
        try onRestarted.ok("auth", ["token": token])
        // Healthy allows a short lag behind the log's top.
        try await untilHolds("the restarted node serves every write") {
            try Self.history(onRestarted, room) == Array((1...(before.count + after.count)).reversed())
        }
        #expect(try cluster.server(1).logText.contains("loaded the shared snapshot"), "\(cluster.logs)")
    }

    @Test func aNodeFrozenWhileTheLogIsTrimmedPastItReloadsFromTheSnapshotByItself() async throws {
        let cluster = try await ClusterHarness(nodes: 2, arguments: Self.arguments)
        let (alice, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let room = "room:frozen"
        _ = try alice.publishAll(room, (1...3).map { ["n": $0] })
        // The frozen node must not be the snapshotter, or nothing is trimmed until its lease ends.
        var snapshotter = ""
        try await untilHolds("a node holds the snapshot lease") {
            snapshotter = RedisProbe.command(port: cluster.redis.port, ["GET", "huddle:snapshotter"]) ?? ""
            return !snapshotter.isEmpty
        }
        let frozen = snapshotter.hasPrefix(cluster.name(0) + " ") ? 1 : 0
        let writer = try ProtocolClient.signedUp("carol", port: cluster.port(1 - frozen)).0
        try await untilHolds("the frozen node has applied the writes") {
            try cluster.metrics(frozen).value("huddle_cluster_log_position") == cluster.metrics(1 - frozen).value("huddle_cluster_log_position")
        }
        let frozenAt = UInt64(try #require(try cluster.metrics(frozen).value("huddle_cluster_log_position")))
        let pid = try cluster.server(frozen).pid
        kill(pid, SIGSTOP)
        let written: [Int]
        do {
            written = try await Self.writeUntilTrimmed(past: frozenAt, cluster, writer, room: "room:while-frozen")
        } catch {
            kill(pid, SIGCONT)
            throw error
        }
        kill(pid, SIGCONT)

        try await cluster.server(frozen).waitForLog("rebuilt from the shared snapshot", timeout: 30)
        try await cluster.waitUntilHealthy(frozen)
        let onFrozen = try ProtocolClient(port: cluster.port(frozen))
        try onFrozen.ok("auth", ["token": token])
        try await untilHolds("the thawed node serves every write") {
            try Self.history(onFrozen, "room:while-frozen") == Array(written.reversed())
        }
        #expect(try Self.history(onFrozen, room) == [3, 2, 1])
        #expect(JSON.int(try onFrozen.publish(room, ["n": 4])["offset"]) == 4, "it writes on top of the reloaded state")
    }
}
