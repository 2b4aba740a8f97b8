import CHiredis
import Foundation
import Synchronization
import HuddleRedis
import RedisTestSupport
import Testing

/// Redis round trips per second on this machine, for the choice of I/O model and of the log's
/// append (docs/ARCHITECTURE.md, "Cluster mode (design)"): printed, never asserted. Opt-in:
///
///     HUDDLE_REDIS_MEASURE=1 swift test -c release --filter HuddleRedisTests.RoundTripMeasurement
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["HUDDLE_REDIS_MEASURE"] != nil))
struct RoundTripMeasurement {
    /// Sequential writes each wait for an fsync (`appendfsync always`): fewer of them.
    static let count = 20_000
    static let sequentialWrites = 1_000

    /// hiredis's blocking API: what one dedicated Redis thread can do, one command at a time.
    @Test func blockingContext() async throws {
        let redis = try await RedisProcess()
        guard let context = redisConnect("127.0.0.1", Int32(redis.port)), context.pointee.err == 0 else { throw TestFailure("connect") }
        defer { redisFree(context) }
        for (name, arguments) in [("PING", ["PING"]), ("XADD *", ["XADD", "blocking", "*", "cmd", String(repeating: "x", count: 200)])] {
            let count = name == "PING" ? Self.count : Self.sequentialWrites
            let start = Date()
            for _ in 0..<count {
                guard RedisProbe.command(on: context, arguments) != nil else { throw TestFailure("no reply") }
            }
            report("blocking redisContext, \(name), sequential", start: start, commands: count)
        }
    }

    /// The event-loop client: one command at a time chained on the loop (no thread hop), the
    /// same from a Swift task (a hop to the loop and back per command, like a queue in front of
    /// a dedicated thread), and 100 in flight.
    @Test(arguments: ["PING", "XADD *", "XADD at position", "appendOnce (EVALSHA)"])
    func eventLoopClient(command: String) async throws {
        let redis = try await RedisProcess()
        try await withClients(of: redis.endpoint) { clients, running in
            let client = clients[0]
            let payload = [UInt8](repeating: 120, count: 200)
            let position = Counter()
            _ = try await client.appendOnce("warm", writersKey: "warm-writers", writer: "w", sequence: 1, fields: [.init("cmd", [])])  // loads the script
            let sequential = command == "PING" ? Self.count : Self.sequentialWrites
            // One command on the loop thread, its success or failure to `done`.
            let issue: @Sendable (@escaping (Bool) -> Void) -> Void = { done in
                let next = position.next()
                let arguments: [[UInt8]]
                switch command {
                case "PING": arguments = [Array("PING".utf8)]
                case "XADD *": arguments = ["XADD", "log", "*", "cmd"].map { Array($0.utf8) } + [payload]
                case "XADD at position": arguments = ["XADD", "log", "\(next)-0", "cmd"].map { Array($0.utf8) } + [payload]
                default:
                    return client.appendOnce("log", writersKey: "writers", writer: "node-a", sequence: next, fields: [.init("cmd", payload)]) {
                        done((try? $0.get()).map { if case .appended = $0 { true } else { false } } ?? false)
                    }
                }
                client.send(arguments) { done((try? $0.get()) != nil) }
            }

            var start = Date()
            let chained = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
                running.loop.execute {
                    var failures = 0
                    var done = 0
                    func next() {
                        issue { succeeded in
                            if !succeeded { failures += 1 }
                            done += 1
                            if done == sequential { continuation.resume(returning: failures) } else { next() }
                        }
                    }
                    next()
                }
            }
            #expect(chained == 0)
            report("event loop, \(command), sequential on the loop", start: start, commands: sequential)

            start = Date()
            for _ in 0..<sequential / 4 {
                let succeeded = await withCheckedContinuation { continuation in running.loop.execute { issue { continuation.resume(returning: $0) } } }
                #expect(succeeded)
            }
            report("event loop, \(command), sequential from a task", start: start, commands: sequential / 4)

            start = Date()
            for _ in 0..<Self.count / 100 {
                let succeeded = await withCheckedContinuation { continuation in
                    running.loop.execute {
                        var replies = 0
                        var failures = 0
                        for _ in 0..<100 {
                            issue { succeeded in
                                replies += 1
                                if !succeeded { failures += 1 }
                                if replies == 100 { continuation.resume(returning: failures == 0) }
                            }
                        }
                    }
                }
                #expect(succeeded)
            }
            report("event loop, \(command), 100 in flight", start: start, commands: Self.count)
        }
    }

    private func report(_ what: String, start: Date, commands: Int) {
        let elapsed = Date().timeIntervalSince(start)
        print(String(format: "%@: %d in %.2f s = %.0f/s, %.1f µs each", what, commands, elapsed, Double(commands) / elapsed, elapsed / Double(commands) * 1e6))
    }
}

/// Positions handed out to the commands of a measurement, from any thread.
private final class Counter: Sendable {
    private let value = Mutex<UInt64>(0)
    func next() -> UInt64 { value.withLock { $0 += 1; return $0 } }
}
