import ChildProcessExit
import HuddleRedis
import RedisTestSupport
import Testing

/// Login attempts limited in Redis, shared by every node: three nodes together get what one
/// alone would, the buckets refill with Redis's time, their keys go when full, and a Redis that
/// cannot be reached is an error, never "allowed".
@Suite(.ownThread) struct RedisLoginThrottleTests {
    private static func limits(pair: Int, address: Int, account: Int, refill: Int64) -> RedisLoginThrottle.Limits {
        .init(
            perAccountAndAddress: .init(capacity: pair, refillMilliseconds: refill),
            perAddress: .init(capacity: address, refillMilliseconds: refill),
            perAccount: .init(capacity: account, refillMilliseconds: refill))
    }

    @Test func threeNodesGetNoMoreAttemptsThanOne() async throws {
        let redis = try await RedisProcess()
        try await withClients(3, of: redis.endpoint) { clients, _ in
            let limits = Self.limits(pair: 5, address: 8, account: 6, refill: 600_000)
            let nodes = clients.map { RedisLoginThrottle(client: $0, limits: limits) }
            // Each node tries 10 guesses at alice from one address, all at once.
            let outcomes = try await withThrowingTaskGroup(of: RedisLoginThrottle.Admission.self) { group in
                for node in nodes { for _ in 0..<10 { group.addTask { try await node.admit(account: "alice", address: "10.0.0.1") } } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count { $0 == .allowed } == 5, "the pair's bucket, shared by the three nodes")
            for case .refused(let wait) in outcomes { #expect(wait > 0 && wait <= 600_000) }

            // The same address on other accounts: its own bucket (8) has 3 left.
            var others: [RedisLoginThrottle.Admission] = []
            for index in 0..<6 { others.append(try await nodes[index % 3].admit(account: "user\(index)", address: "10.0.0.1")) }
            #expect(others.count { $0 == .allowed } == 3)
            // Alice from other addresses: her account's bucket (6) has 1 left.
            var elsewhere: [RedisLoginThrottle.Admission] = []
            for index in 0..<4 { elsewhere.append(try await nodes[index % 3].admit(account: "alice", address: "10.0.1.\(index)")) }
            #expect(elsewhere.count { $0 == .allowed } == 1)

            // A success gives back what the core clears: alice's pair and account, one address token.
            try await nodes[1].succeeded(account: "alice", address: "10.0.0.1")
            #expect(try await nodes[2].admit(account: "alice", address: "10.0.0.1") == .allowed)
            #expect(try await nodes[0].admit(account: "bob", address: "10.0.0.1") != .allowed, "the address got one token back, just used")
        }
    }

    @Test func bucketsRefillAndTheirKeysExpireWhenFull() async throws {
        let redis = try await RedisProcess()
        try await withClients(2, of: redis.endpoint) { clients, _ in
            let limits = Self.limits(pair: 2, address: 10, account: 10, refill: 300)
            let throttle = RedisLoginThrottle(client: clients[0], limits: limits)
            let keys = throttle.keys(account: "alice", address: "10.0.0.1")
            #expect(try await throttle.admit(account: "alice", address: "10.0.0.1") == .allowed)
            #expect(try await throttle.admit(account: "alice", address: "10.0.0.1") == .allowed)
            guard case .refused(let wait) = try await throttle.admit(account: "alice", address: "10.0.0.1") else {
                throw TestFailure("a third attempt within the refill was allowed")
            }
            #expect(wait > 0 && wait <= 300)
            // Each key expires when its bucket is full again: the pair's two refills away at most.
            for key in keys {
                let ttl = try await clients[1].pttl(key)
                #expect(ttl != nil && ttl! <= 600, "\(key) expires when full, not \(String(describing: ttl))")
            }
            try await eventually("a token refilled") {
                try await throttle.admit(account: "alice", address: "10.0.0.1") == .allowed
            }
            try await eventually("every key gone once its bucket is full") {
                var left = 0
                for key in keys where try await clients[1].pttl(key) != nil { left += 1 }
                return left == 0
            }
        }
    }

    @Test func anUnreachableRedisIsAnErrorNeverAnAdmission() async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, _ in
            let throttle = RedisLoginThrottle(client: clients[0], limits: Self.limits(pair: 5, address: 5, account: 5, refill: 1_000))
            #expect(try await throttle.admit(account: "alice", address: "10.0.0.1") == .allowed)
            try await redis.kill9()
            try await eventually("the client noticed") { await clients[0].currentAddress() == nil }
            await #expect(throws: RedisError.notConnected(address: "redis://127.0.0.1:\(redis.port)/0")) {
                try await throttle.admit(account: "alice", address: "10.0.0.1")
            }
            // Restarted on its AOF, with an empty script cache: EVALSHA falls back to EVAL, and
            // the attempt taken before the kill is still counted.
            try await redis.restart()
            _ = try await clients[0].waitUntilConnected(timeout: 20)
            #expect(try await clients[0].pttl(throttle.keys(account: "alice", address: "10.0.0.1")[0]) != nil)
            #expect(try await throttle.admit(account: "alice", address: "10.0.0.1") == .allowed)
        }
    }
}
