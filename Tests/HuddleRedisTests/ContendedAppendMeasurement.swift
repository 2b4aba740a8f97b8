import Foundation
import HuddleRedis
import RedisTestSupport
import Testing

/// Three writers (three nodes' worth of clients) appending to one log for a few seconds, one
/// append in flight each, as a node's core would between turns: compare-and-append at the next
/// position (retrying after reading the new top on a conflict) against XADD with Redis picking
/// the ID. Printed, never asserted; opt-in with the round-trip measurements:
///
///     HUDDLE_REDIS_MEASURE=1 swift test --filter HuddleRedisTests.ContendedAppendMeasurement
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["HUDDLE_REDIS_MEASURE"] != nil))
struct ContendedAppendMeasurement {
    static let writers = 3
    static let seconds = 3.0

    @Test(arguments: [false, true])
    func threeWriters(compareAndAppend: Bool) async throws {
        let redis = try await RedisProcess()
        try await withClients(Self.writers, of: redis.endpoint) { clients, running in
            let deadline = MonotonicDeadline(seconds: Self.seconds)
            let tallies = await withTaskGroup(of: (appended: Int, conflicts: Int).self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        await withCheckedContinuation { continuation in
                            running.loop.execute {
                                var position: UInt64 = 0
                                var appended = 0
                                var conflicts = 0
                                let payload = ["XADD", "log"].map { Array($0.utf8) }
                                let fields = [Array("by".utf8), Array("\(index)".utf8)]
                                func next() {
                                    guard !deadline.passed else { return continuation.resume(returning: (appended, conflicts)) }
                                    let id = compareAndAppend ? "\(position + 1)-0" : "*"
                                    client.send(payload + [Array(id.utf8)] + fields) { result in
                                        switch result {
                                        case .success:
                                            appended += 1
                                            position += 1
                                            next()
                                        case .failure:
                                            // Someone appended first: learn the new top (a node would read
                                            // and apply the entries it missed), then decide again.
                                            conflicts += 1
                                            client.send(["XREVRANGE", "log", "+", "-", "COUNT", "1"].map { Array($0.utf8) }) { top in
                                                let id = (try? top.get())?.elements?.first?.elements?.first?.string
                                                position = id.flatMap(RedisStreamID.init)?.milliseconds ?? position
                                                next()
                                            }
                                        }
                                    }
                                }
                                next()
                            }
                        }
                    }
                }
                var all: [(appended: Int, conflicts: Int)] = []
                for await tally in group { all.append(tally) }
                return all
            }
            let appended = tallies.map(\.appended).reduce(0, +)
            let stored = try await clients[0].xrange("log").count
            #expect(stored == appended)
            print(String(
                format: "%@, %d writers: %.0f appends/s in total; appended per writer %@, conflicts per writer %@",
                compareAndAppend ? "compare-and-append (XADD at position)" : "XADD *", Self.writers, Double(appended) / Self.seconds,
                tallies.map { "\($0.appended)" }.joined(separator: "/"), tallies.map { "\($0.conflicts)" }.joined(separator: "/")))
        }
    }
}

/// A point in monotonic time `seconds` from now, readable from any thread.
private struct MonotonicDeadline: Sendable {
    private let end: UInt64
    init(seconds: Double) { end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9) }
    var passed: Bool { DispatchTime.now().uptimeNanoseconds >= end }
}
