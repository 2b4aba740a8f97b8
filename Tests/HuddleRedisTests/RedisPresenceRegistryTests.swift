import ChildProcessExit
import HuddleIO
import HuddleRedis
import RedisTestSupport
import Testing

/// Global presence through Redis: nodes see each other's users come and go, a node that stops
/// renewing its lease is reported gone and its set deleted, and a picture missed while Redis
/// was down is repaired when it comes back.
@Suite(.ownThread) struct RedisPresenceRegistryTests {
    /// A registry whose changes are recorded as text ("+alice@a", "-alice@a", "gone a").
    private final class Node: Sendable {
        let registry: RedisPresenceRegistry
        let changes = Received()

        init(_ name: String, nonce: String = "boot1", of url: String, on loop: EventLoop, options: RedisPresenceRegistry.Options = .init()) throws {
            let changes = changes
            registry = try RedisPresenceRegistry(endpoint: try RedisEndpoint(url: url), loop: loop, node: name, nonce: nonce, options: options) { batch in
                for change in batch {
                    switch change {
                    case .online(let user, let node): changes.add("+\(user)@\(node)")
                    case .offline(let user, let node): changes.add("-\(user)@\(node)")
                    case .nodeGone(let node): changes.add("gone \(node)")
                    }
                }
            }
        }

        func set(_ user: String, online: Bool) {
            registry.loop.execute { [registry] in registry.setLocal(user, online: online) }
        }

        func sees(_ expected: [String: Set<String>]) async -> Bool { await registry.elsewhere() == expected }
    }

    /// Nodes "a" and "b" on one loop, closed (as a crash would) at the end.
    private func withTwoNodes(_ body: (RedisProcess, Node, Node) async throws -> Void) async throws {
        let redis = try await RedisProcess()
        let running = try RunningLoop()
        defer { running.stop() }
        let a = try Node("a", of: redis.endpoint, on: running.loop)
        let b = try Node("b", of: redis.endpoint, on: running.loop)
        defer { a.registry.close(); b.registry.close() }
        try await body(redis, a, b)
    }

    @Test func twoNodesSeeEachOthersUsersComeAndGo() async throws {
        try await withTwoNodes { redis, a, b in
            a.set("alice", online: true)
            b.set("bob", online: true)
            b.set("bea", online: true)
            try await eventually("b sees alice on a") { await b.sees(["a": ["alice"]]) }
            try await eventually("a sees bob and bea on b") { await a.sees(["b": ["bob", "bea"]]) }
            a.set("alice", online: false)
            b.set("bob", online: false)
            try await eventually("alice gone from a, as b sees it") { await b.sees(["a": []]) }
            try await eventually("bob gone from b, as a sees it") { await a.sees(["b": ["bea"]]) }
            #expect(b.changes.all.contains("+alice@a") && b.changes.all.contains("-alice@a"))
            #expect(b.changes.all.firstIndex(of: "+alice@a")! < b.changes.all.firstIndex(of: "-alice@a")!)
            #expect(a.changes.all.filter { $0.hasSuffix("@b") }.last == "-bob@b")
            #expect(!a.changes.all.contains { $0.hasSuffix("@a") }, "a node's own changes are not reported to it")

            // What Redis holds: each node's set and its name.
            try await withClients(of: redis.endpoint) { clients, _ throws in
                #expect(try await clients[0].smembers("huddle:online:b") == ["bea"])
                #expect(try await clients[0].smembers("huddle:nodes") == ["a", "b"])
            }

            // A node leaving on purpose is reported gone at once, its set deleted.
            await b.registry.leave()
            try await eventually("a sees b gone") { a.changes.all.contains("gone b") }
            #expect(await a.sees([:]))
        }
    }

    @Test func aNodeThatStopsRenewingIsReportedGoneAndItsSetDeleted() async throws {
        let redis = try await RedisProcess()
        let running = try RunningLoop()
        defer { running.stop() }
        var options = RedisPresenceRegistry.Options()
        options.leaseMilliseconds = 600
        options.renewMilliseconds = 200
        let a = try Node("a", of: redis.endpoint, on: running.loop, options: options)
        let b = try Node("b", of: redis.endpoint, on: running.loop, options: options)
        defer { b.registry.close() }
        a.set("alice", online: true)
        try await eventually("b sees alice") { await b.sees(["a": ["alice"]]) }

        // a dies without a word: b must notice from the lease alone.
        a.registry.close()
        try await eventually("b reports a gone") { b.changes.all.contains("gone a") }
        #expect(await b.sees([:]))
        try await withClients(of: redis.endpoint) { clients, _ throws in
            #expect(try await clients[0].smembers("huddle:online:a") == [])
            #expect(try await clients[0].smembers("huddle:nodes") == ["b"])
        }

        // a restarts (a new boot) and comes back with its users.
        let again = try Node("a", nonce: "boot2", of: redis.endpoint, on: running.loop, options: options)
        defer { again.registry.close() }
        again.set("alice", online: true)
        try await eventually("b sees a again") { await b.sees(["a": ["alice"]]) }
    }

    @Test func aPictureMissedWhileRedisWasDownIsRepaired() async throws {
        try await withTwoNodes { redis, a, b in
            a.set("alice", online: true)
            a.set("amy", online: true)
            try await eventually("b sees a's users") { await b.sees(["a": ["alice", "amy"]]) }

            try await redis.kill9()
            // While Redis is down, a's users change: nobody can be told now.
            a.set("amy", online: false)
            a.set("anna", online: true)
            try await redis.restart()
            try await eventually("b's picture repaired") { await b.sees(["a": ["alice", "anna"]]) }
            // And it keeps following after the repair.
            a.set("alice", online: false)
            try await eventually("the next change") { await b.sees(["a": ["anna"]]) }
            #expect(b.changes.all.contains("-amy@a") && b.changes.all.contains("+anna@a"))
        }
    }

    @Test func aResubscriptionRereadsWhatItMissed() async throws {
        let redis = try await RedisProcess()
        let running = try RunningLoop()
        defer { running.stop() }
        let b = try Node("b", of: redis.endpoint, on: running.loop)
        defer { b.registry.close() }
        let subscribed = { RedisProbe.command(port: redis.port, ["PUBSUB", "NUMSUB", "huddle:presence"]) == "huddle:presence\n1" }
        try await eventually("b subscribed", subscribed)
        try await eventually("b registered") { RedisProbe.command(port: redis.port, ["EXISTS", "huddle:node:b"]) == "1" }

        // Node c's users arrive with no message on the channel: as if b had missed them.
        for command in [["SET", "huddle:node:c", "boot1", "PX", "60000"], ["SADD", "huddle:nodes", "c"], ["SADD", "huddle:online:c", "carl", "cleo"], ["SET", "huddle:presence-seq:c", "7"]] {
            _ = RedisProbe.command(port: redis.port, command)
        }
        #expect(await b.sees([:]))
        // The subscription drops (as when the subscriber's connection breaks) and comes back.
        #expect(RedisProbe.command(port: redis.port, ["CLIENT", "KILL", "TYPE", "pubsub"]) == "1")
        try await eventually("b's picture repaired") { await b.sees(["c": ["carl", "cleo"]]) }
        #expect(Set(b.changes.all) == ["+carl@c", "+cleo@c"])
        // Messages after the read follow on from its sequence; an older one is ignored.
        _ = RedisProbe.command(port: redis.port, ["PUBLISH", "huddle:presence", "c 7 -carl"])
        _ = RedisProbe.command(port: redis.port, ["PUBLISH", "huddle:presence", "c 8 -cleo"])
        try await eventually("the next change") { await b.sees(["c": ["carl"]]) }
    }
}
