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
                #expect(try await nodeA.appendAt("log", position: position, fields: [.init("by", Array("a".utf8))]))
            }
            // Both applied up to 42 and both propose 43, concurrently: exactly one wins.
            async let wonByA = nodeA.appendAt("log", position: 43, fields: [.init("by", Array("a".utf8))])
            async let wonByB = nodeB.appendAt("log", position: 43, fields: [.init("by", Array("b".utf8))])
            let (a, b) = try await (wonByA, wonByB)
            #expect(a != b)
            // A writer that has not seen 43 cannot append 43 nor slip in behind it.
            #expect(try await !nodeB.appendAt("log", position: 43, fields: [.init("by", Array("b".utf8))]))
            #expect(try await !nodeB.appendAt("log", position: 40, fields: [.init("by", Array("b".utf8))]))
            let log = try await nodeA.xrange("log")
            #expect(log.map(\.id.milliseconds) == Array(1...43))
            #expect(log.last?["by"] == Array((a ? "a" : "b").utf8))
            // Trimming the stream does not reopen a position: Redis keeps the last ID it gave.
            _ = try await nodeA.command(["XTRIM", "log", "MAXLEN", "0"])
            #expect(try await !nodeB.appendAt("log", position: 43, fields: [.init("by", Array("b".utf8))]))
            #expect(try await nodeB.appendAt("log", position: 44, fields: [.init("by", Array("b".utf8))]))
        }
    }
}
