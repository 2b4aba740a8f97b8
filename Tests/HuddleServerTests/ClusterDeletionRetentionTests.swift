import ChildProcessExit
import Foundation
import RedisTestSupport
import Testing

/// protocol.md "Deletion and retention", cluster mode: a deleted user's erasure is decided once
/// (chunks by the ticker) and applied by every node, and what remains of them in Redis and the
/// shared snapshots is bounded as documented: the shared log is trimmed behind the older of the
/// two kept snapshots, so once two snapshots were written after the erasure (two
/// `--snapshot-interval`s while anything is written), no log entry and no snapshot holds them.
@Suite(.ownThread) struct ClusterDeletionRetentionTests {
    static let key = "test-api-key-0123456789"

    @Test func aDeletedUserLeavesTheSharedLogAndSnapshotsWithinTwoSnapshots() async throws {
        let cluster = try await ClusterHarness(nodes: 2, arguments: ["--api-key", Self.key, "--snapshot-interval", "1"])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let (bob, _) = try ProtocolClient.signedUp("bob", port: cluster.port(1))
        let marker = "alice-wrote-this-0f3a"
        try alice.publish("room:lobby", marker)
        try await cluster.untilHolds("node 2 has her message") {
            JSON.text(try bob.ok("history", ["channel": "room:lobby"])).contains(marker)
        }

        let deleted = try HTTPExchange(port: cluster.port(1), "DELETE", "/api/v1/users/alice", key: Self.key)
        #expect(deleted.status == 200, "\(deleted.body)")
        try await cluster.untilHolds("her erasure is finished and applied by both nodes") {
            try cluster.indices.allSatisfy { index in
                let reader = try ProtocolClient(port: cluster.port(index))
                _ = try reader.login("bob")
                let page = try reader.ok("history", ["channel": "room:lobby"])
                return !JSON.text(page).contains(marker)
            } && cluster.logs.contains("erasure finished")
        }
        let erasedAt = try #require(try cluster.metrics(1).value("huddle_cluster_log_position"))

        // Anything written afterwards lets the snapshotter write two snapshots past the erasure.
        try await cluster.untilHolds("two shared snapshots after the erasure, the log trimmed behind the older", timeout: 60) {
            _ = try bob.publish("room:after", ["n": 1])
            let positions = Self.snapshotPositions(cluster)
            let first = try Self.firstLogPosition(cluster)
            return positions.count == 2 && positions.allSatisfy { Double($0) >= erasedAt } && first > UInt64(erasedAt)
        }
        let log = try #require(RedisProbe.command(port: cluster.redis.port, ["XRANGE", "huddle:log", "-", "+"]))
        #expect(!log.contains(marker) && !log.contains("alice"), "the shared log no longer holds her")
    }

    static func snapshotPositions(_ cluster: ClusterHarness) -> [UInt64] {
        // No directory yet before the first snapshot.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: cluster.sharedDirectory.appendingPathComponent("snapshots").path)) ?? []
        return names.compactMap { name in
            guard name.hasPrefix("snapshot-"), name.hasSuffix(".snap") else { return nil }
            return UInt64(name.dropFirst("snapshot-".count).dropLast(".snap".count), radix: 16)
        }
    }

    static func firstLogPosition(_ cluster: ClusterHarness) throws -> UInt64 {
        guard let reply = RedisProbe.command(port: cluster.redis.port, ["XRANGE", "huddle:log", "-", "+", "COUNT", "1"]) else {
            throw TestFailure("redis did not answer XRANGE")
        }
        return reply.split(separator: "\n").first.flatMap { UInt64($0.split(separator: "-")[0]) } ?? 0
    }
}
