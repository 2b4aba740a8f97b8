import ChildProcessExit
import Foundation
import HuddleRedis
@testable import HuddleServer
import RedisTestSupport
import Testing

/// A node's claim of its name at start-up against a real redis-server: idempotent for its own
/// boot (a SET that landed but whose reply was lost is a success when tried again), refused
/// while another boot holds the name.
@Suite(.ownThread) struct NodeLeaseTests {
    static func settings(_ redis: RedisProcess) throws -> ClusterSettings {
        ClusterSettings(redis: try RedisEndpoint(url: redis.endpoint), nodeName: "node-1", sharedDirectory: "unused")
    }

    @Test func aClaimWhoseEarlierSetLandedSucceeds() async throws {
        let redis = try await RedisProcess()
        // What a first claim left when its reply was lost with its connection.
        #expect(RedisProbe.command(port: redis.port, ["SET", NodeLease.key("node-1"), "node-1/boot-a", "PX", "60000"]) == "OK")
        let started = Date()
        try NodeLease.claim(try Self.settings(redis), holder: "node-1/boot-a")
        // Not after waiting for its own lease to run out.
        #expect(Date().timeIntervalSince(started) < Double(ClusterLog.leaseMilliseconds) / 1000)
        #expect(RedisProbe.command(port: redis.port, ["GET", NodeLease.key("node-1")]) == "node-1/boot-a")
    }

    @Test func anotherBootsLiveClaimIsRefused() async throws {
        let redis = try await RedisProcess()
        #expect(RedisProbe.command(port: redis.port, ["SET", NodeLease.key("node-1"), "node-1/boot-a", "PX", "60000"]) == "OK")
        #expect(throws: ConfigurationError.self) { try NodeLease.claim(try Self.settings(redis), holder: "node-1/boot-b") }
        #expect(RedisProbe.command(port: redis.port, ["GET", NodeLease.key("node-1")]) == "node-1/boot-a")
    }
}
