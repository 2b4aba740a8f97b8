import ChildProcessExit
import HuddleRedis
import RedisTestSupport
import Testing

/// The conditional appends the shared log can rest on: never two entries for one retried
/// write, never two writers at one position.
@Suite(.ownThread) struct RedisLogAppendTests {
    @Test func aRetriedAppendIsRecordedOnce() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let client = clients[0]

            let first = try await client.appendOnce("log", writersKey: "writers", writer: "node-a", sequence: 1, fields: [.init("cmd", [1])])
            guard case .appended(let firstID) = first else { throw TestFailure("first append: \(first)") }
            // The same write again (a retry after a lost reply): nothing added, the entry's ID told.
            #expect(try await client.appendOnce("log", writersKey: "writers", writer: "node-a", sequence: 1, fields: [.init("cmd", [1])]) == .duplicate(firstID))
            // Another writer's sequence 1 is its own.
            let other = try await client.appendOnce("log", writersKey: "writers", writer: "node-b", sequence: 1, fields: [.init("cmd", [2])])
            guard case .appended = other else { throw TestFailure("other writer: \(other)") }
            let third = try await client.appendOnce("log", writersKey: "writers", writer: "node-a", sequence: 5, fields: [.init("cmd", [3])])
            guard case .appended(let thirdID) = third else { throw TestFailure("later append: \(third)") }
            // An older sequence than the writer's last is a duplicate too.
            #expect(try await client.appendOnce("log", writersKey: "writers", writer: "node-a", sequence: 4, fields: [.init("cmd", [9])]) == .duplicate(thirdID))
            #expect(try await client.xrange("log").map { $0["cmd"] ?? [] } == [[1], [2], [3]])

            // A restarted (or failed-over) Redis has no cached script: EVALSHA's NOSCRIPT falls back to EVAL.
            #expect(try await client.command(["SCRIPT", "FLUSH"]) == .status("OK"))
            let afterFlush = try await client.appendOnce("log", writersKey: "writers", writer: "node-a", sequence: 6, fields: [.init("cmd", [4])])
            guard case .appended = afterFlush else { throw TestFailure("after SCRIPT FLUSH: \(afterFlush)") }
            #expect(try await client.xrange("log").count == 4)
        }
    }

    @Test func twoWritersNeverTakeOnePosition() async throws {
        let redis = try await RedisProcess()
        try await withClients(2, of: redis.endpoint) { clients, _ in
            let (nodeA, nodeB) = (clients[0], clients[1])

            for position in UInt64(1)...42 {
                #expect(try await nodeA.appendAt("log", position: position, fields: [.init("by", Array("a".utf8))]) == .appended)
            }
            // Both applied up to 42 and both propose 43, concurrently: exactly one wins.
            async let wonByA = nodeA.appendAt("log", position: 43, fields: [.init("by", Array("a".utf8))])
            async let wonByB = nodeB.appendAt("log", position: 43, fields: [.init("by", Array("b".utf8))])
            let (a, b) = try await (wonByA, wonByB)
            #expect((a == .appended) != (b == .appended))
            #expect([a, b].contains(.refused(top: RedisStreamID(milliseconds: 43, sequence: 0))))
            // A writer that has not seen 43 cannot append 43 nor slip in behind it.
            #expect(try await nodeB.appendAt("log", position: 43, fields: [.init("by", Array("b".utf8))]) == .refused(top: id(43)))
            #expect(try await nodeB.appendAt("log", position: 40, fields: [.init("by", Array("b".utf8))]) == .refused(top: id(43)))
            let log = try await nodeA.xrange("log")
            #expect(log.map(\.id.milliseconds) == Array(1...43))
            #expect(log.last?["by"] == Array((a == .appended ? "a" : "b").utf8))
            // Trimming the stream does not reopen a position: Redis keeps the last ID it gave.
            _ = try await nodeA.command(["XTRIM", "log", "MAXLEN", "0"])
            #expect(try await nodeB.appendAt("log", position: 43, fields: [.init("by", Array("b".utf8))]) == .refused(top: id(43)))
            #expect(try await nodeB.appendAt("log", position: 44, fields: [.init("by", Array("b".utf8))]) == .appended)
        }
    }

    /// The failover that lost the top (a promoted replica never had entry 8): a writer that
    /// applied 8 proposes 9 on a stream whose top is 7. A bare XADD would take 9 and leave a gap
    /// at 8 that no reader can apply past; the compare-and-append refuses and tells the top.
    @Test func anAppendAboveALostTopIsRefusedWithTheTop() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let client = clients[0]
            // The stream as the replica has it: entries 1 to 7, as plain XADDs (replicated ones).
            for position in UInt64(1)...7 {
                _ = try await client.xadd("log", id: id(position), fields: [.init("w", Array("a".utf8))])
            }
            #expect(try await client.appendAt("log", position: 9, fields: [.init("w", Array("b".utf8))]) == .refused(top: id(7)))
            #expect(try await client.appendAt("log", position: 20, fields: [.init("w", Array("b".utf8))]) == .refused(top: id(7)))
            #expect(try await client.xrange("log").map(\.id.milliseconds) == Array(1...7))
            // A stream never written: only position 1 goes.
            #expect(try await client.appendAt("empty", position: 2, fields: [.init("w", [1])]) == .refused(top: id(0)))
            #expect(try await client.appendAt("empty", position: 1, fields: [.init("w", [1])]) == .appended)
        }
    }

    /// The failover that lost the top and another writer appended in its place: the position
    /// matches, the entry does not. A writer that built on the lost entry names it
    /// (`expectingTop`) and is refused; one that built on the new entry appends.
    @Test func anAppendOnAReplacedTopIsRefused() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let client = clients[0]
            let lost: [RedisStreamEntry.Field] = [.init("w", Array("node-a".utf8)), .init("t", Array("12".utf8))]
            let replacing: [RedisStreamEntry.Field] = [.init("w", Array("node-b".utf8)), .init("t", Array("5".utf8))]
            #expect(try await client.appendAt("log", position: 1, fields: replacing + [.init("c", [1])]) == .appended)
            #expect(try await client.appendAt("log", position: 2, expectingTop: lost, fields: [.init("w", [2])]) == .topReplaced)
            #expect(try await client.appendAt("log", position: 2, expectingTop: [lost[0], replacing[1]], fields: [.init("w", [2])]) == .topReplaced)
            #expect(try await client.xrange("log").count == 1)
            #expect(try await client.appendAt("log", position: 2, expectingTop: replacing, fields: [.init("w", [2])]) == .appended)
            // The entry expected is trimmed away: only the position can be compared.
            _ = try await client.command(["XTRIM", "log", "MAXLEN", "0"])
            #expect(try await client.appendAt("log", position: 3, expectingTop: lost, fields: [.init("w", [3])]) == .appended)

            // A restarted (or failed-over) Redis has no cached script: EVALSHA's NOSCRIPT falls back to EVAL.
            #expect(try await client.command(["SCRIPT", "FLUSH"]) == .status("OK"))
            #expect(try await client.appendAt("log", position: 4, fields: [.init("w", [4])]) == .appended)
        }
    }

    private func id(_ position: UInt64) -> RedisStreamID { RedisStreamID(milliseconds: position, sequence: 0) }
}
