import ChildProcessExit
import Foundation
import RedisTestSupport
import Testing

/// Issue 14: redis-server restarts on its AOF under writes. While it loads its data it accepts
/// connections and answers commands `LOADING`: a node must take that as "not now" and take
/// writes again once Redis does, although its connection never dropped meanwhile.
@Suite(.ownThread) struct ClusterRedisRestartTests {
    @Test func writesResumeAfterRedisAnsweredLoading() async throws {
        let cluster = try await ClusterHarness(nodes: 2)
        let (alice, _) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        try alice.ok("post", ["text": "before"])
        // An AOF that takes a while to load: one script's half a million keys.
        let filled = RedisProbe.command(
            port: cluster.redis.port, ["EVAL", "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'filler:' .. i, i) end return 1", "0", "500000"],
            timeout: 120)
        #expect(filled == "1")

        try await cluster.kill9Redis()
        async let restarted: Void = cluster.restartRedis()
        // Writes while Redis is down, loading, and back: refused (unavailable) until it takes
        // them; the node must have met LOADING on the way.
        try await untilHolds("a node's append answered LOADING", timeout: 60) {
            _ = try alice.request("post", ["text": "during"])
            return try cluster.server(0).logText.contains("LOADING") || cluster.server(1).logText.contains("LOADING")
        }
        try await restarted
        try await untilHolds("node 1 takes writes again", timeout: 30) {
            JSON.bool(try alice.request("post", ["text": "after"])["ok"]) == true
        }
    }
}
