import ChildProcessExit
import Foundation
import HuddleCore
@testable import HuddleServer
import Logging
import RedisTestSupport
import Testing

/// What a joining node pays before it can serve a large cluster (issue 14, acceptance 4): the
/// newest shared snapshot of 100k users and 1M chat messages, loaded and decoded. Printed, never
/// asserted. Opt-in (sizes overridable with HUDDLE_CLUSTER_USERS and HUDDLE_CLUSTER_MESSAGES):
///
///     HUDDLE_CLUSTER_MEASURE=1 swift test -c release --filter ClusterJoinMeasurement
@Suite(.ownThread, .serialized, .enabled(if: ProcessInfo.processInfo.environment["HUDDLE_CLUSTER_MEASURE"] != nil))
struct ClusterJoinMeasurement {
    @Test func loadingTheNewestSnapshotOfALargeCluster() async throws {
        let environment = ProcessInfo.processInfo.environment
        let users = environment["HUDDLE_CLUSTER_USERS"].flatMap { Int($0) } ?? 100_000
        let messages = environment["HUDDLE_CLUSTER_MESSAGES"].flatMap { Int($0) } ?? 1_000_000
        let clock = ContinuousClock()
        var state = CoreDurableState()
        let building = clock.measure { state = SampleState.build(users: users, messagesPerChat: messages / (users / 2)) }
        var payloadBytes = 0
        let encoding = clock.measure { payloadBytes = state.snapshotPayload.count }

        let redis = try await RedisProcess()
        let shared = SharedDirectory()
        defer { shared.remove() }
        let node = try await SnapshotNode(redis: redis, sharedDirectory: shared.path, name: "a")
        let position = UInt64(messages + users)
        try await node.snapshotOnce(state, at: position)
        let fileBytes = try FileManager.default.attributesOfItem(atPath: shared.path + "/snapshots/" + ClusterSnapshotsTests.name(position))[.size] as? Int ?? 0

        var loads: [Duration] = []
        for _ in 0..<2 {
            var loaded: (state: CoreDurableState, position: UInt64)?
            loads.append(try clock.measure { loaded = try ClusterSnapshots.loadNewest(sharedDirectory: shared.path, logger: Logger(label: "measure")) })
            #expect(loaded?.position == position)
            #expect(loaded?.state == state)
        }
        func seconds(_ duration: Duration) -> String { String(format: "%.2f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18) }
        print("""
            cluster join, \(users) users, \(messages) chat messages (\(users / 2) chats):
              state built by apply:      \(seconds(building))
              snapshot payload:          \(payloadBytes / 1_000_000) MB, encoded in \(seconds(encoding))
              snapshot file (deflated):  \(fileBytes / 1_000_000) MB, encoded + written in \(String(format: "%.2f s", node.metrics.lastSeconds))
              loadNewest (read, inflate, check, decode): \(loads.map(seconds).joined(separator: ", "))
            """)
    }

    /// Redis memory while the log runs: entries appended, a snapshot every `entriesPerSnapshot`,
    /// the log trimmed behind the older of the two kept. Memory follows the retained tail (one
    /// to two snapshot intervals of entries), not the entries ever appended.
    @Test func redisMemoryStaysBoundedWhileTheLogRuns() async throws {
        let environment = ProcessInfo.processInfo.environment
        let snapshots = environment["HUDDLE_CLUSTER_SNAPSHOTS"].flatMap { Int($0) } ?? 20
        let entriesPerSnapshot = 5_000
        let entry = [UInt8](repeating: UInt8(ascii: "c"), count: 300)
        let redis = try await RedisProcess()
        let shared = SharedDirectory()
        defer { shared.remove() }
        let node = try await SnapshotNode(redis: redis, sharedDirectory: shared.path, name: "a")
        let state = SampleState.build(users: 2, messagesPerChat: 1)
        var position: UInt64 = 0
        var lines: [String] = []
        for round in 1...snapshots {
            for _ in 0..<(entriesPerSnapshot / 500) {
                let batch = (1...500).map { offset in
                    [Array("XADD".utf8), Array(ClusterKeys.log.utf8), Array("\(position + UInt64(offset))-0".utf8), Array("c".utf8), entry]
                }
                for result in await node.client.pipeline(batch) { _ = try result.get() }
                position += 500
            }
            let peak = try await node.client.info("memory")["used_memory"] ?? "?"
            let target = position
            try await eventually("snapshot \(round) starts") { await node.snapshotIfDue(state, at: target) == .started }
            try await eventually("snapshot \(round) is recorded") { node.metrics.position.load(ordering: .relaxed) == target }
            let memory = try await node.client.info("memory")["used_memory"] ?? "?"
            let length = try await node.client.command(["XLEN", ClusterKeys.log]).integer ?? -1
            lines.append("  \(position) entries appended: used_memory \(peak) before the snapshot, \(memory) after; the stream holds \(length)")
        }
        await node.stop()
        print("redis memory, \(entriesPerSnapshot) entries of \(entry.count) bytes per snapshot:\n" + lines.joined(separator: "\n"))
    }
}
