import Foundation
import HuddleCore
import HuddleIO
import HuddleRedis
@testable import HuddleServer
import Logging
import RedisTestSupport

/// One cluster node as far as snapshots go: a loop thread playing the core thread, a Redis
/// client on it, and the node's `ClusterSnapshots`, driven from the test.
// Sendable: `snapshots` is only touched on `running.loop`, the rest is immutable.
final class SnapshotNode: @unchecked Sendable {
    let running: RunningLoop
    let client: RedisClient
    let metrics = ClusterSnapshotMetrics()
    private let snapshots: ClusterSnapshots

    init(redis: RedisProcess, sharedDirectory: String, name: String, leaseMilliseconds: Int64 = 10_000) async throws {
        running = try RunningLoop()
        client = RedisClient(endpoint: try RedisEndpoint(url: redis.endpoint), loop: running.loop)
        _ = try await client.waitUntilConnected(timeout: 10)
        snapshots = try ClusterSnapshots(
            sharedDirectory: sharedDirectory, redis: client, nodeName: name, intervalMilliseconds: 0,
            leaseMilliseconds: leaseMilliseconds, metrics: metrics, logger: Logger(label: "snapshots-\(name)"))
    }

    /// What the runtime does between two turns, on the core's loop.
    func snapshotIfDue(_ state: CoreDurableState, at position: UInt64) async -> ClusterSnapshots.Decision {
        await withCheckedContinuation { continuation in
            running.loop.execute { [self] in
                continuation.resume(returning: snapshots.snapshotIfDue(state: state, position: position, coreLoop: running.loop))
            }
        }
    }

    /// Snapshots `state` at `position`, waits until it is recorded, and stops: a shared
    /// directory as a cluster's snapshotter leaves it.
    func snapshotOnce(_ state: CoreDurableState, at position: UInt64) async throws {
        try await eventually("the snapshot starts", timeout: 60) { await snapshotIfDue(state, at: position) == .started }
        try await eventually("the snapshot is recorded", timeout: 1_200) { metrics.position.load(ordering: .relaxed) == position }
        await stop()
    }

    func firstLogPosition() async throws -> UInt64? {
        let result = await withCheckedContinuation { continuation in
            running.loop.execute { [self] in snapshots.firstLogPosition { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }

    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            running.loop.execute { [self] in
                snapshots.close()
                continuation.resume()
            }
        }
        client.close()
        running.stop()
    }
}

/// A fresh directory standing for the nodes' shared one, removed by `remove()`.
struct SharedDirectory {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-shared-\(UUID().uuidString)").path

    var snapshotFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path + "/snapshots")) ?? []).sorted()
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
