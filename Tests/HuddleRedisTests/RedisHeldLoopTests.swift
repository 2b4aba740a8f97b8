import ChildProcessExit
import Glibc
import HuddleIO
import HuddleRedis
import RedisTestSupport
import Synchronization
import Testing

/// A loop held up past the reply timeout (a long turn, a starved process on a loaded box) while
/// Redis had already answered: the reply waiting in the socket is the answer, not a silence (the
/// loop reads it before the sweep runs). And a command issued just before the hold, which goes
/// out only after it, is timed from its write.
@Suite(.ownThread) struct RedisHeldLoopTests {
    @Test func aReplyAlreadyInTheSocketIsTakenWhenTheLoopWasHeldPastTheTimeout() async throws {
        // Redis answers when the test pushes, standing for a reply that comes late: timed as an
        // ordinary command, not as a block.
        let reply = try await replyToCommandHeldOnItsLoop(["BLPOP", "held", "0"]) { held in
            // The next turn: hiredis has written the command in this turn's events (its socket
            // was writable), and the loop is held from there on.
            held.loop.execute {
                held.until("Redis blocks on the command") { RedisProbe.command(port: held.port, ["INFO", "clients"])?.contains("blocked_clients:1") == true }
                held.until("Redis takes the push") { RedisProbe.command(port: held.port, ["RPUSH", "held", "x"]) == "1" }
                // One more round trip: Redis has written the unblocked reply by then.
                held.until("Redis answers a ping") { RedisProbe.command(port: held.port, ["PING"]) == "PONG" }
                held.untilTheSweepAfterTheDeadline()
            }
        }
        #expect(reply == .array([.bulk(Array("held".utf8)), .bulk(Array("x".utf8))]))
    }

    /// A command issued in a turn that is then held past the reply timeout (a long turn that
    /// sends early) is still in hiredis's buffer: it goes out when the loop next finds the
    /// socket writable, after the hold. Redis's time starts then, not when it was issued.
    @Test func aCommandIssuedBeforeAHoldIsTimedFromItsWrite() async throws {
        let reply = try await replyToCommandHeldOnItsLoop(["PING"]) { held in held.untilTheSweepAfterTheDeadline() }
        #expect(reply == .status("PONG"))
    }

    /// The same for the connect timeout: a connection the kernel completed during the hold is
    /// connected, not timed out.
    @Test func aConnectionCompletedDuringAHoldIsNotTimedOut() async throws {
        let redis = try await RedisProcess()
        let address = RedisAddress(host: "127.0.0.1", port: redis.port)
        let running = try RunningLoop()
        defer { running.stop() }
        let loop = running.loop
        let stuck = HoldFailures()
        let timeout: Int64 = 500
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<RedisError?, Never>) in
            loop.execute {
                let startedAt = MonotonicClock.milliseconds()
                let connection = RedisConnection(loop: loop, address: address, connectTimeout: timeout, onConnect: { error in
                    continuation.resume(returning: error)
                }, onClose: { _ in })
                // Redis accepts from its own loop while this one is held: it lists the client.
                holdUntil(stuck, "Redis accepts the connection") {
                    (RedisProbe.command(port: redis.port, ["CLIENT", "LIST"])?.split(separator: "\n").count ?? 0) >= 2
                }
                holdUntil(stuck, "the connect timeout passes") { MonotonicClock.milliseconds() > startedAt + timeout }
                LoopBound(connection, loop: loop).execute { $0.close() }
            }
        }
        #expect(stuck.notes.withLock { $0 } == [])
        #expect(outcome == nil, "\(String(describing: outcome))")
    }
}

/// The reply to `command`, sent by a client (1 s reply timeout) of a fresh Redis in a task on
/// the client's loop, which then runs `hold` on the loop's thread; the connection must survive.
private func replyToCommandHeldOnItsLoop(_ command: [String], thenHold hold: @escaping @Sendable (HeldCommand) -> Void) async throws -> RedisReply {
    let redis = try await RedisProcess()
    var options = RedisClient.Options()
    options.replyTimeout = 1_000
    let port = redis.port
    let timeout = options.replyTimeout
    let stuck = HoldFailures()
    var reply: RedisReply?
    try await withClients(of: redis.endpoint, options: options) { clients, running async throws in
        let client = clients[0]
        let loop = running.loop
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<RedisReply, RedisError>, Never>) in
            loop.execute {
                client.send(command.map { Array($0.utf8) }) { continuation.resume(returning: $0) }
                hold(HeldCommand(loop: loop, port: port, issuedAt: MonotonicClock.milliseconds(), timeout: timeout, stuck: stuck))
            }
        }
        reply = try result.get()
        #expect(try await client.command(["PING"]) == .status("PONG"))
    }
    #expect(stuck.notes.withLock { $0 } == [])
    return try #require(reply)
}

/// What a hold on the loop of `replyToCommandHeldOnItsLoop` knows.
private struct HeldCommand: Sendable {
    let loop: EventLoop
    let port: Int
    let issuedAt: Int64
    let timeout: Int64
    let stuck: HoldFailures

    func until(_ what: String, _ condition: () -> Bool) { holdUntil(stuck, what, condition) }

    /// Past the command's deadline and one sweep interval: the sweep runs in this turn.
    func untilTheSweepAfterTheDeadline() {
        until("the deadline passes") { MonotonicClock.milliseconds() > issuedAt + timeout + timeout / 4 }
    }
}

/// Holds the calling (loop) thread until `condition` holds (the hold is the test's point), or
/// notes in `stuck` what did not happen within 20 s.
private func holdUntil(_ stuck: HoldFailures, _ what: String, _ condition: () -> Bool) {
    let giveUp = MonotonicClock.milliseconds() + 20_000
    while !condition() {
        guard MonotonicClock.milliseconds() < giveUp else { return stuck.notes.withLock { $0.append(what) } }
        usleep(5_000)
    }
}

/// What a hold on the loop's thread waited for in vain, for the test's thread to report.
private final class HoldFailures: Sendable {
    let notes = Mutex<[String]>([])
}
