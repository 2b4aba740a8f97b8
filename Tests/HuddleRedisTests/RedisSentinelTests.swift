import ChildProcessExit
import HuddleRedis
import RedisTestSupport
import Testing

/// A Sentinel-managed Redis: the master found through Sentinel, and followed through a failover.
@Suite(.ownThread) struct RedisSentinelTests {
    @Test func theClientFollowsAFailover() async throws {
        let primary = try await RedisProcess()
        let replica = try await RedisProcess(.replica(of: primary.port))
        try await eventually("the replica's link to the primary") {
            RedisProbe.command(port: replica.port, ["INFO", "replication"])?.contains("master_link_status:up") == true
        }
        let sentinel = try await RedisProcess(.sentinel(monitoring: primary.port))
        try await eventually("Sentinel's discovery of the replica") {
            RedisProbe.command(port: sentinel.port, ["INFO", "sentinel"])?.contains("status=ok,address=127.0.0.1:\(primary.port),slaves=1") == true
        }
        let running = try RunningLoop()
        defer { running.stop() }
        let url = "redis+sentinel://127.0.0.1:\(sentinel.port)/\(RedisProcess.masterName)"
        let client = RedisClient(endpoint: try RedisEndpoint(url: url), loop: running.loop)
        defer { client.close() }
        #expect(try await client.waitUntilConnected(timeout: 10).port == primary.port)

        // Acknowledged by the replica too (WAIT): these must survive the primary's death.
        var acknowledged: [RedisStreamID] = []
        for index in 0..<50 {
            acknowledged.append(try await client.xadd("log", fields: [.init("n", Array("\(index)".utf8))]))
        }
        #expect(try await client.wait(replicas: 1, timeoutMilliseconds: 10_000) == 1)

        try await primary.kill9()
        try await eventually("the failover to the replica", timeout: 60) {
            await client.currentAddress()?.port == replica.port
        }
        #expect(RedisProbe.command(port: replica.port, ["ROLE"])?.hasPrefix("master") == true)
        let entries = try await client.xrange("log")
        #expect(entries.map(\.id) == acknowledged)
        let after = try await client.xadd("log", fields: [.init("n", Array("after".utf8))])
        #expect(after > acknowledged.last!)
    }

    @Test func aMasterNoSentinelKnowsIsReportedWithEachAnswer() async throws {
        let primary = try await RedisProcess()
        let sentinel = try await RedisProcess(.sentinel(monitoring: primary.port))
        let gone = try await RedisProcess(.sentinel(monitoring: primary.port))
        let gonePort = gone.port
        try await gone.kill9()
        let running = try RunningLoop()
        defer { running.stop() }
        let url = "redis+sentinel://127.0.0.1:\(gonePort),127.0.0.1:\(sentinel.port)/elsewhere"
        let client = RedisClient(endpoint: try RedisEndpoint(url: url), loop: running.loop)
        defer { client.close() }
        await #expect(throws: RedisError.noMaster(name: "elsewhere", answers: [
            "cannot connect to Redis at 127.0.0.1:\(gonePort): Connection refused",
            "127.0.0.1:\(sentinel.port): does not monitor it",
        ])) {
            try await client.waitUntilConnected(timeout: 10, failFast: true)
        }
        // The first Sentinel down, the second names the master.
        let found = RedisClient(endpoint: try RedisEndpoint(url: "redis+sentinel://127.0.0.1:\(gonePort),127.0.0.1:\(sentinel.port)/\(RedisProcess.masterName)"), loop: running.loop)
        defer { found.close() }
        #expect(try await found.waitUntilConnected(timeout: 10).port == primary.port)
    }

    @Test func aReplicaIsNotTakenForTheMaster() async throws {
        let primary = try await RedisProcess()
        let replica = try await RedisProcess(.replica(of: primary.port))
        let running = try RunningLoop()
        defer { running.stop() }
        let client = RedisClient(endpoint: try RedisEndpoint(url: replica.endpoint), loop: running.loop)
        defer { client.close() }
        await #expect(throws: RedisError.connectFailed(address: "127.0.0.1:\(replica.port)", reason: "it is a slave, not the master")) {
            try await client.waitUntilConnected(timeout: 10, failFast: true)
        }
    }
}
