import ChildProcessExit
import HuddleRedis
import RedisTestSupport
import Testing

/// Redis dies under the client: what was acknowledged stays (AOF, `appendfsync always`), what
/// was in flight is reported as unknown, nothing is sent meanwhile, and the client comes back
/// by itself when Redis does.
@Suite(.ownThread) struct RedisClientReconnectTests {
    @Test func acknowledgedAppendsSurviveKill9AndTheClientReconnects() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let client = clients[0]

            var acknowledged: [RedisStreamID] = []
            for index in 0..<200 {
                acknowledged.append(try await client.xadd("log", fields: [.init("n", Array("\(index)".utf8))]))
            }
            // A burst in flight while Redis dies: each append is either acknowledged or reported
            // as lost (possibly applied), never silently dropped. The kill lands once Redis has
            // taken some of it (each fsync takes milliseconds, so most is still to come).
            async let burst = client.pipeline((0..<20_000).map { [Array("XADD".utf8), Array("log".utf8), Array("*".utf8), Array("n".utf8), Array("burst-\($0)".utf8)] })
            try await eventually("the burst under way") {
                Int(RedisProbe.command(port: redis.port, ["XLEN", "log"]) ?? "") ?? 0 > 300
            }
            try await redis.kill9()
            let outcomes = await burst
            #expect(outcomes.count == 20_000)
            var lostOrRefused = 0
            for outcome in outcomes {
                switch outcome {
                case .success(let reply): acknowledged.append(try #require(reply.string.flatMap(RedisStreamID.init)))
                case .failure(.connectionLost), .failure(.notConnected): lostOrRefused += 1
                case .failure(let error): Issue.record("unexpected failure \(error)")
                }
            }

            // Down: commands are refused at once, not queued.
            try await eventually("the client noticed the dead Redis") { await client.currentAddress() == nil }
            await #expect(throws: RedisError.notConnected(address: "redis://127.0.0.1:\(redis.port)/0")) {
                try await client.command(["PING"])
            }

            try await redis.restart()
            _ = try await client.waitUntilConnected(timeout: 20)
            let entries = try await client.xrange("log")
            let present = Set(entries.map(\.id))
            #expect(acknowledged.allSatisfy(present.contains), "every acknowledged XADD is in the AOF")
            #expect(entries.count >= acknowledged.count && entries.count <= acknowledged.count + lostOrRefused)
            #expect(try await client.command(["PING"]) == .status("PONG"))
        }
    }

    @Test func aRefusedConnectionIsReportedInPlainWords() async throws {
        let redis = try await RedisProcess()
        let port = redis.port
        try await redis.kill9()
        let running = try RunningLoop()
        defer { running.stop() }
        let client = RedisClient(endpoint: try RedisEndpoint(url: "redis://127.0.0.1:\(port)"), loop: running.loop)
        defer { client.close() }
        await #expect(throws: RedisError.connectFailed(address: "127.0.0.1:\(port)", reason: "Connection refused")) {
            try await client.waitUntilConnected(timeout: 10, failFast: true)
        }
        do {
            _ = try await client.command(["PING"])
            Issue.record("a command went through with no Redis")
        } catch {
            #expect("\(error)" == "not connected to Redis at redis://127.0.0.1:\(port)/0; the command was not sent")
        }
        // It keeps trying: the restarted server is found without anyone asking.
        try await redis.restart()
        #expect(try await client.waitUntilConnected(timeout: 20).port == port)
    }

    @Test func subscriptionsComeBackAfterARestart() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, running in
            let publisher = clients[0]
            let subscriber = RedisSubscriber(endpoint: publisher.endpoint, loop: running.loop)
            defer { subscriber.close() }
            let received = Received()
            running.loop.execute {
                subscriber.onSubscribed = { _ in received.add("subscribed") }
                subscriber.onResubscribed = { received.add("resubscribed") }
                subscriber.subscribe("typing") { received.add(String(decoding: $0, as: UTF8.self)) }
            }
            try await eventually("the subscription") { received.all.contains("subscribed") }
            #expect(try await publisher.publish("typing", Array("alice".utf8)) == 1)
            try await eventually("the first message") { received.all.contains("alice") }

            try await redis.kill9()
            try await redis.restart()
            try await eventually("the resubscription") { received.all.contains("resubscribed") }
            _ = try await publisher.waitUntilConnected(timeout: 20)
            #expect(try await publisher.publish("typing", Array("bob".utf8)) == 1)
            try await eventually("the message after the restart") { received.all.contains("bob") }
            #expect(received.all.filter { $0 == "alice" || $0 == "bob" } == ["alice", "bob"])
        }
    }
}

/// A Redis that stops answering without closing (paused here with SIGSTOP, as a partition
/// looks) is given up on after the reply timeout, and found again when it answers.
@Suite(.ownThread) struct RedisReplyTimeoutTests {
    @Test func aSilentRedisIsDroppedAndFoundAgain() async throws {
        let redis = try await RedisProcess()
        var options = RedisClient.Options()
        options.replyTimeout = 300
        try await withClients(of: redis.endpoint, options: options) { clients, _ in
            let client = clients[0]
            // A blocking read longer than the reply timeout is a wait, not a silence.
            #expect(try await client.xread("log", after: RedisStreamID(milliseconds: 0, sequence: 0), blockMilliseconds: 1_000) == [])

            redis.pause()
            defer { redis.resume() }
            var silence: RedisError?
            do {
                _ = try await client.command(["PING"])
            } catch {
                silence = error as? RedisError
            }
            guard case .connectionLost(_, let reason)? = silence else { throw TestFailure("a paused Redis gave \(String(describing: silence))") }
            #expect(reason.hasPrefix("no reply within "))
            redis.resume()
            _ = try await client.waitUntilConnected(timeout: 20)
            #expect(try await client.command(["PING"]) == .status("PONG"))
        }
    }
}
