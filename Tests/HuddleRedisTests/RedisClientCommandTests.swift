import ChildProcessExit
import HuddleRedis
import RedisTestSupport
import Testing

/// The client against a real redis-server: each command's reply typed, errors told apart,
/// pipelining in order.
@Suite(.ownThread) struct RedisClientCommandTests {
    @Test func keysLeasesAndInfo() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let client = clients[0]
            #expect(await client.currentAddress() == RedisAddress(host: "127.0.0.1", port: redis.port))

            #expect(try await client.setIfAbsent("lease", to: Array("node-a".utf8), expiringAfter: 60_000))
            #expect(try await !client.setIfAbsent("lease", to: Array("node-b".utf8), expiringAfter: 60_000))
            #expect(try await client.get("lease") == Array("node-a".utf8))
            let ttl = try await client.command(["PTTL", "lease"]).integer ?? -1
            #expect((1...60_000).contains(ttl))
            #expect(try await client.del(["lease", "absent"]) == 1)
            #expect(try await client.get("lease") == nil)

            #expect(try await client.publish("nobody-listens", Array("hello".utf8)) == 0)
            // No replica: WAIT 0 returns at once with the count of replicas that have the writes.
            #expect(try await client.wait(replicas: 0, timeoutMilliseconds: 100) == 0)
            let persistence = try await client.info("persistence")
            #expect(persistence["aof_enabled"] == "1")
            let server = try await client.info("server")
            #expect(server["tcp_port"] == "\(redis.port)")
        }
    }

    @Test func setsAndExpiries() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ throws in
            let client = clients[0]
            #expect(try await client.sadd("online", ["alice", "bob"]) == 2)
            #expect(try await client.sadd("online", ["bob", "carol"]) == 1)
            #expect(try await client.srem("online", ["bob", "dave"]) == 1)
            #expect(try await client.smembers("online") == ["alice", "carol"])
            #expect(try await client.smembers("nothing") == [])
            #expect(try await client.pttl("online") == .max)
            #expect(try await client.pttl("nothing") == nil)
            #expect(try await client.setIfAbsent("lease", to: [1], expiringAfter: 60_000))
            #expect((1...60_000).contains(try await client.pttl("lease") ?? -1))
            await #expect(throws: RedisError.server("WRONGTYPE Operation against a key holding the wrong kind of value")) {
                try await client.smembers("lease")
            }
        }
    }

    @Test func streamsAppendRangeAndBlockingRead() async throws {
        let redis = try await RedisProcess()
        try await withClients(2, of: redis.endpoint) { clients, _ in
            let (writer, reader) = (clients[0], clients[1])

            let first = try await writer.xadd("log", fields: [.init("cmd", [0, 1, 2, 255])])
            let second = try await writer.xadd("log", fields: [.init("cmd", Array("b".utf8)), .init("node", Array("n1".utf8))])
            #expect(first < second)
            let all = try await writer.xrange("log")
            #expect(all.map(\.id) == [first, second])
            #expect(all[0]["cmd"] == [0, 1, 2, 255])
            #expect(all[1].fields == [.init("cmd", Array("b".utf8)), .init("node", Array("n1".utf8))])
            #expect(try await writer.xrange("log", from: second).map(\.id) == [second])
            #expect(try await writer.xrange("log", count: 1).map(\.id) == [first])
            #expect(try await writer.xread("log", after: second) == [])

            // The reader blocks on its own connection; the entry appended meanwhile wakes it.
            async let woken = reader.xread("log", after: second, blockMilliseconds: 30_000)
            try await eventually("the reader blocked in XREAD") {
                (try await writer.info("clients")["blocked_clients"]) == "1"
            }
            let third = try await writer.xadd("log", fields: [.init("cmd", Array("c".utf8))])
            #expect(try await woken.map(\.id) == [third])
            // A blocking read that times out is an empty answer, not an error.
            #expect(try await reader.xread("log", after: third, blockMilliseconds: 10) == [])
        }
    }

    @Test func pipelinedRepliesComeBackInOrder() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let client = clients[0]
            let commands = (0..<2_000).map { index in index % 2 == 0 ? [Array("INCR".utf8), Array("counter".utf8)] : [Array("BOGUS".utf8)] }
            let results = await client.pipeline(commands)
            #expect(results.count == 2_000)
            for (index, result) in results.enumerated() {
                if index % 2 == 0 {
                    #expect(try result.get() == .integer(Int64(index / 2 + 1)))
                } else {
                    #expect(throws: RedisError.self) { try result.get() }
                }
            }
            let stats = try await client.info("stats")
            #expect(Int(stats["total_commands_processed"] ?? "") ?? 0 >= 1_000)
        }
    }

    @Test func errorRepliesAreReportedAndTheConnectionGoesOn() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let client = clients[0]
            _ = try await client.xadd("log", fields: [.init("cmd", [1])])
            await #expect(throws: RedisError.server("WRONGTYPE Operation against a key holding the wrong kind of value")) {
                try await client.get("log")
            }
            do {
                _ = try await client.command(["NOSUCHCOMMAND", "x"])
                Issue.record("an unknown command succeeded")
            } catch {
                #expect("\(error)".hasPrefix("Redis replied with an error: ERR unknown command 'NOSUCHCOMMAND'"))
            }
            #expect(try await client.command(["PING"]) == .status("PONG"))
        }
    }

    @Test func theDatabaseInTheURLIsSelected() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint + "/3") { thirds, running in
            let third = thirds[0]
            let zeroth = RedisClient(endpoint: try RedisEndpoint(url: redis.endpoint), loop: running.loop)
            defer { zeroth.close() }
            _ = try await zeroth.waitUntilConnected(timeout: 10)
            _ = try await third.command(["SET", "where", "three"])
            #expect(try await zeroth.get("where") == nil)
            #expect(try await third.get("where") == Array("three".utf8))
            #expect(RedisProbe.command(port: redis.port, ["INFO", "keyspace"])?.contains("db3:keys=1") == true)

            let missing = RedisClient(endpoint: try RedisEndpoint(url: redis.endpoint + "/99"), loop: running.loop)
            defer { missing.close() }
            await #expect(throws: RedisError.connectFailed(address: "127.0.0.1:\(redis.port)", reason: "SELECT 99: Redis replied with an error: ERR DB index is out of range")) {
                try await missing.waitUntilConnected(timeout: 10, failFast: true)
            }
        }
    }
}
