import ChildProcessExit
import HuddleIO
import HuddleRedis
import RedisTestSupport
import Testing

/// A lease one process of many holds: taken when free, renewed by its holder only, taken by
/// another once its holder stops renewing, given up at once on release.
@Suite(.ownThread) struct RedisLeaseTests {
    /// `refreshIfDue` on the loop, its answer awaited (nil: not due, no request went out).
    static func refresh(_ lease: RedisLease, on loop: EventLoop, now: Int64 = MonotonicClock.milliseconds()) async throws -> Bool? {
        let box = UncheckedLease(lease)
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Bool, RedisError>?, Never>) in
            loop.execute {
                let asked = box.lease.refreshIfDue(now: now) { continuation.resume(returning: $0) }
                if !asked { continuation.resume(returning: nil) }
            }
        }
        return try answer?.get()
    }

    static func state(_ lease: RedisLease, on loop: EventLoop) async -> RedisLease.State {
        let box = UncheckedLease(lease)
        return await withCheckedContinuation { continuation in
            loop.execute { continuation.resume(returning: box.lease.state(now: MonotonicClock.milliseconds())) }
        }
    }

    static func release(_ lease: RedisLease, on loop: EventLoop) async throws -> Bool {
        let box = UncheckedLease(lease)
        let answer = await withCheckedContinuation { continuation in
            loop.execute { box.lease.release { continuation.resume(returning: $0) } }
        }
        return try answer.get()
    }

    @Test func oneHolderAtATimeTheLeaseMovesWhenItsHolderStopsRenewing() async throws {
        let redis = try await RedisProcess()
        try await withClients(2, of: redis.endpoint) { clients, running in
            let loop = running.loop
            let a = RedisLease(key: "lease", holder: "a 1", milliseconds: 3_000, client: clients[0])
            let b = RedisLease(key: "lease", holder: "b 1", milliseconds: 3_000, client: clients[1])
            #expect(await Self.state(a, on: loop) == .unknown)
            #expect(try await Self.refresh(a, on: loop) == true)
            #expect(await Self.state(a, on: loop) == .held)
            #expect(try await Self.refresh(b, on: loop) == false)
            #expect(await Self.state(b, on: loop) == .heldByAnother)
            #expect(try await clients[0].get("lease") == Array("a 1".utf8))
            // Not due again before a third of its time: no request.
            #expect(try await Self.refresh(a, on: loop) == nil)

            // Its holder renews it: the expiry moves forward, the holder stays.
            _ = try await clients[0].command(["PEXPIRE", "lease", "100"])
            #expect(try await Self.refresh(a, on: loop, now: MonotonicClock.milliseconds() + 1_000) == true)
            let renewed = try await clients[0].command(["PTTL", "lease"]).integer ?? -1
            #expect(renewed > 100)

            // The holder stops renewing: once the key expired in Redis, the other takes it.
            try await eventually("b takes the lease after a stopped renewing") {
                try await Self.refresh(b, on: loop, now: MonotonicClock.milliseconds() + 10_000) == true
            }
            #expect(try await clients[0].get("lease") == Array("b 1".utf8))
            #expect(try await Self.refresh(a, on: loop, now: MonotonicClock.milliseconds() + 20_000) == false)
            #expect(await Self.state(a, on: loop) == .heldByAnother)

            // Release by a process that does not hold it changes nothing; by the holder, frees it.
            #expect(try await Self.release(a, on: loop) == false)
            #expect(try await clients[0].get("lease") == Array("b 1".utf8))
            #expect(try await Self.release(b, on: loop) == true)
            #expect(try await clients[0].get("lease") == nil)
            #expect(await Self.state(b, on: loop) == .unknown)
            #expect(try await Self.refresh(a, on: loop, now: MonotonicClock.milliseconds() + 30_000) == true)
        }
    }
}

/// Carries a lease (a loop-thread object) to its loop.
private struct UncheckedLease: @unchecked Sendable {
    let lease: RedisLease
    init(_ lease: RedisLease) { self.lease = lease }
}
