import ChildProcessExit
import Foundation
import HuddleCore
import HuddleRedis
@testable import HuddleServer
import Logging
import RedisTestSupport
import Testing

/// Cluster snapshots against a real redis-server and real files: one writer at a time (the
/// lease holder), two snapshots kept, the shared log trimmed behind the older, and a joining
/// node loading exactly what was written, or the older one when the newest is damaged.
@Suite(.ownThread) struct ClusterSnapshotsTests {
    static let logger = Logger(label: "cluster-snapshots-test")

    static func name(_ position: UInt64) -> String {
        let digits = String(position, radix: 16)
        return "snapshot-" + String(repeating: "0", count: 16 - digits.count) + digits + ".snap"
    }

    /// Writes `state` at `position` through `node` and waits until it is recorded in Redis.
    static func snapshot(_ node: SnapshotNode, _ state: CoreDurableState, at position: UInt64) async throws {
        try await eventually("the snapshot at \(position) starts") { await node.snapshotIfDue(state, at: position) == .started }
        try await eventually("the snapshot at \(position) is recorded") { node.metrics.position.load(ordering: .relaxed) == position }
    }

    @Test func onlyTheLeaseHolderWritesAndAnotherTakesOverWhenItStopsRenewing() async throws {
        let redis = try await RedisProcess()
        let shared = SharedDirectory()
        defer { shared.remove() }
        let a = try await SnapshotNode(redis: redis, sharedDirectory: shared.path, name: "a", leaseMilliseconds: 5_000)
        let b = try await SnapshotNode(redis: redis, sharedDirectory: shared.path, name: "b", leaseMilliseconds: 5_000)
        let (stateA, stateB) = (SampleState.build(users: 4, messagesPerChat: 3, seed: 1), SampleState.build(users: 6, messagesPerChat: 2, seed: 2))

        try await Self.snapshot(a, stateA, at: 1)
        #expect(String(decoding: try await a.client.get(ClusterKeys.snapshotter) ?? [], as: UTF8.self).hasPrefix("a "))
        // While a renews its lease, b is told it is not the holder, and writes nothing.
        try await eventually("b hears that a holds the lease") {
            #expect(await a.snapshotIfDue(stateA, at: 1) == .notDue)
            return await b.snapshotIfDue(stateB, at: 2) == .notLeaseHolder
        }
        #expect(shared.snapshotFiles == [Self.name(1)])
        #expect(try await a.client.zrange(ClusterKeys.snapshots).map(\.member) == [Self.name(1)])

        // a stops renewing (as if it died): once its lease expires, b takes it and writes.
        try await eventually("b takes the lease over and writes", timeout: 30) { await b.snapshotIfDue(stateB, at: 2) == .started }
        try await eventually("b's snapshot is recorded") { b.metrics.position.load(ordering: .relaxed) == 2 }
        #expect(String(decoding: try await b.client.get(ClusterKeys.snapshotter) ?? [], as: UTF8.self).hasPrefix("b "))
        try await eventually("a hears that it lost the lease") { await a.snapshotIfDue(stateA, at: 3) == .notLeaseHolder }
        #expect(shared.snapshotFiles == [Self.name(1), Self.name(2)])
        #expect(try await b.client.zrange(ClusterKeys.snapshots).map(\.score) == [1, 2])
        let loaded = try #require(try ClusterSnapshots.loadNewest(sharedDirectory: shared.path, logger: Self.logger))
        #expect(loaded.position == 2)
        #expect(loaded.state == stateB)
        await a.stop()
        await b.stop()
    }

    @Test func threeSnapshotsKeepTwoFilesTwoMembersAndTrimTheLogBehindTheOlder() async throws {
        let redis = try await RedisProcess()
        let shared = SharedDirectory()
        defer { shared.remove() }
        let node = try await SnapshotNode(redis: redis, sharedDirectory: shared.path, name: "a")
        #expect(try await node.firstLogPosition() == nil)
        for position in UInt64(1)...30 {
            #expect(try await node.client.appendAt(ClusterKeys.log, position: position, fields: [.init("c", [UInt8(position)])]) == .appended)
        }
        var states: [UInt64: CoreDurableState] = [:]
        for position: UInt64 in [10, 20, 30] {
            states[position] = SampleState.build(users: Int(position / 5), messagesPerChat: 2, seed: Int(position))
            try await Self.snapshot(node, states[position]!, at: position)
        }

        #expect(shared.snapshotFiles == [Self.name(20), Self.name(30)])
        let members = try await node.client.zrange(ClusterKeys.snapshots)
        #expect(members.map(\.member) == [Self.name(20), Self.name(30)])
        #expect(members.map(\.score) == [20, 30])
        // Nothing at or below the older snapshot's position is left; everything after it is.
        #expect(try await node.client.xrange(ClusterKeys.log).map(\.id.milliseconds) == Array(21...30))
        #expect(node.metrics.logTrimmed.load(ordering: .relaxed) == 20)
        #expect(node.metrics.prometheusText().contains("huddle_cluster_log_trimmed_total 20\n"))
        #expect(node.metrics.prometheusText().contains("huddle_cluster_snapshot_position 30\n"))
        // A single node (no ClusterSnapshots) shows none of them.
        #expect(ClusterSnapshotMetrics().prometheusText() == "")

        // A node that applied up to 20 still finds the next entry; one at 15 was trimmed past.
        let first = try await node.firstLogPosition()
        #expect(first == 21)
        #expect(!ClusterSnapshots.isTrimmed(after: 20, firstLogPosition: first))
        #expect(ClusterSnapshots.isTrimmed(after: 15, firstLogPosition: first))
        #expect(!ClusterSnapshots.isTrimmed(after: 0, firstLogPosition: nil))

        // Nothing new since the newest recorded snapshot: nothing written.
        #expect(await node.snapshotIfDue(states[30]!, at: 30) == .notDue)
        let loaded = try #require(try ClusterSnapshots.loadNewest(sharedDirectory: shared.path, logger: Self.logger))
        #expect(loaded.position == 30)
        #expect(loaded.state == states[30]!)
        await node.stop()
    }

    @Test func aDamagedNewestSnapshotFallsBackToTheOlderOne() async throws {
        let redis = try await RedisProcess()
        let shared = SharedDirectory()
        defer { shared.remove() }
        #expect(try ClusterSnapshots.loadNewest(sharedDirectory: shared.path, logger: Self.logger) == nil)
        let node = try await SnapshotNode(redis: redis, sharedDirectory: shared.path, name: "a")
        let older = SampleState.build(users: 10, messagesPerChat: 4, seed: 1)
        let newer = SampleState.build(users: 12, messagesPerChat: 4, seed: 2)
        try await Self.snapshot(node, older, at: 10)
        try await Self.snapshot(node, newer, at: 20)
        await node.stop()

        // One byte flipped in the middle of the compressed payload.
        let newest = URL(fileURLWithPath: shared.path + "/snapshots/" + Self.name(20))
        var bytes = try Data(contentsOf: newest)
        bytes[bytes.count / 2] ^= 0xff
        try bytes.write(to: newest)
        let loaded = try #require(try ClusterSnapshots.loadNewest(sharedDirectory: shared.path, logger: Self.logger))
        #expect(loaded.position == 10)
        #expect(loaded.state == older)

        // Both damaged: no silent start from an empty state.
        let oldest = URL(fileURLWithPath: shared.path + "/snapshots/" + Self.name(10))
        var oldBytes = try Data(contentsOf: oldest)
        oldBytes[oldBytes.count / 2] ^= 0xff
        try oldBytes.write(to: oldest)
        #expect(throws: (any Error).self) { try ClusterSnapshots.loadNewest(sharedDirectory: shared.path, logger: Self.logger) }
    }
}
