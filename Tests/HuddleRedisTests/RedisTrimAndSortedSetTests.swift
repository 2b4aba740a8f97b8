import ChildProcessExit
import HuddleRedis
import RedisTestSupport
import Testing

/// The commands behind the cluster's snapshots: XTRIM MINID of the shared log, and the sorted
/// set that lists the snapshots by position.
@Suite(.ownThread) struct RedisTrimAndSortedSetTests {
    @Test func trimmingDropsEntriesBelowTheMinimumAndKeepsTheirPositionsTaken() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let client = clients[0]
            for position in UInt64(1)...10 {
                let appended = try await client.appendAt("log", position: position, fields: [.init("c", [UInt8(position)])])
                #expect(appended == .appended)
            }
            #expect(try await client.xtrim("log", minimumID: RedisStreamID(milliseconds: 7, sequence: 0)) == 6)
            #expect(try await client.xrange("log").map(\.id.milliseconds) == [7, 8, 9, 10])
            // Trimming again to the same point, or behind it, removes nothing.
            #expect(try await client.xtrim("log", minimumID: RedisStreamID(milliseconds: 7, sequence: 0)) == 0)
            #expect(try await client.xtrim("log", minimumID: RedisStreamID(milliseconds: 3, sequence: 0)) == 0)
            // A trimmed position stays taken: a late writer cannot slip in behind the snapshot.
            #expect(try await client.appendAt("log", position: 5, fields: [.init("c", [5])]) != .appended)
            #expect(try await client.xtrim("absent", minimumID: RedisStreamID(milliseconds: 1, sequence: 0)) == 0)
        }
    }

    @Test func sortedSetsAddRangeByRankAndRemove() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let client = clients[0]
            #expect(try await client.zadd("snaps", score: 20, member: "b") == 1)
            #expect(try await client.zadd("snaps", score: 10, member: "a") == 1)
            #expect(try await client.zadd("snaps", score: 9_007_199_254_740_000, member: "c") == 1)
            // Re-adding a member moves it and adds nothing.
            #expect(try await client.zadd("snaps", score: 15, member: "b") == 0)
            let all = try await client.zrange("snaps")
            #expect(all.map(\.member) == ["a", "b", "c"])
            #expect(all.map(\.score) == [10, 15, 9_007_199_254_740_000])
            #expect(try await client.zrange("snaps", from: -1, to: -1).map(\.member) == ["c"])
            #expect(try await client.zrem("snaps", ["a", "absent"]) == 1)
            #expect(try await client.zrange("snaps").map(\.member) == ["b", "c"])
            #expect(try await client.zrange("nothing").isEmpty)
            _ = try await client.command(["SET", "plain", "1"])
            await #expect(throws: RedisError.server("WRONGTYPE Operation against a key holding the wrong kind of value")) {
                try await client.zrange("plain")
            }
        }
    }
}
