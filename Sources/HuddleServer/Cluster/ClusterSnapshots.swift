import HuddleCore
import HuddleIO
import HuddleRedis
import HuddleStore
import Logging

/// Snapshots of a cluster's state in the shared directory, and the trimming of the shared log
/// behind them (docs/ARCHITECTURE.md, "Snapshots, joining, trimming").
///
/// One node at a time writes them: the holder of the lease `huddle:snapshotter`. It snapshots its
/// own copy of the state at a log position, in the single node's format (`SnapshotStore`:
/// `<shared>/snapshots/snapshot-<position>.snap`, temporary file, fsync, rename, directory
/// fsync), keeps the newest two files, records them in `huddle:snapshots` (scored by position)
/// and trims the log behind the older one: whichever of the two a joining node loads, the log
/// still holds everything after it, and Redis holds about two snapshot intervals of log.
///
/// The core thread calls `snapshotIfDue` between turns; the encoding and writing run on a
/// snapshot thread of its own from a copy-on-write copy of the state, as `Persistence` does.
// Sendable: its state is the core thread's; the snapshot thread gets value copies and hops back.
final class ClusterSnapshots: @unchecked Sendable {
    /// What one call of `snapshotIfDue` found.
    enum Decision: Equatable {
        case started
        case inProgress
        /// The lease's state is not known yet (no answer from Redis), or Redis is out of reach.
        case leaseUnknown
        case notLeaseHolder
        /// Too soon after the last one, or nothing new since the newest recorded snapshot.
        case notDue
    }

    private let store: SnapshotStore
    private let redis: RedisClient
    private let lease: RedisLease
    private let intervalMilliseconds: Int64
    private let metrics: ClusterSnapshotMetrics
    private let logger: Logger
    private let snapshotThread: EventLoop
    private let snapshotThreadHandle: LoopThread
    private var inProgress = false
    private var lastSnapshotAt: Int64
    /// The position of the newest snapshot in `huddle:snapshots` (0: none), as of the lease's
    /// last renewal; nil until Redis told.
    private var newestRecorded: UInt64?

    /// The directory inside the shared directory that holds the snapshots.
    static func snapshotDirectory(shared: String) -> String {
        shared.hasSuffix("/") ? shared + "snapshots" : shared + "/snapshots"
    }

    /// `redis` must live on the core's loop (its callbacks then run between the core's turns).
    init(
        sharedDirectory: String, redis: RedisClient, nodeName: String, intervalMilliseconds: Int64,
        leaseMilliseconds: Int64 = 10_000, metrics: ClusterSnapshotMetrics, logger: Logger
    ) throws {
        store = SnapshotStore(directory: Self.snapshotDirectory(shared: sharedDirectory))
        self.redis = redis
        // The nonce makes a restarted node (same name) a new holder, and two nodes configured
        // with one name two holders.
        let nonce = (0..<4).map { _ in String(UInt16.random(in: .min ... .max), radix: 16) }.joined()
        lease = RedisLease(key: ClusterKeys.snapshotter, holder: "\(nodeName) \(nonce)", milliseconds: leaseMilliseconds, client: redis)
        self.intervalMilliseconds = intervalMilliseconds
        self.metrics = metrics
        self.logger = logger
        snapshotThread = try EventLoop(index: -1, readBufferSize: 16)
        snapshotThreadHandle = try LoopThread.spawn(name: "huddle-cluster-snapshot") { [snapshotThread] in snapshotThread.run() }
        lastSnapshotAt = MonotonicClock.milliseconds()
        metrics.active.store(true, ordering: .relaxed)
    }

    // MARK: Loading (before the node serves)

    /// The newest snapshot in `<sharedDirectory>/snapshots` that passes every check, falling back
    /// to the older one as the single node does (the log is kept behind it); nil when there is
    /// none. Throws when snapshots exist but none is valid, or one is not a state this version
    /// reads: starting from the log's beginning, which is trimmed, would lose their state.
    /// `atOrBelow`: only snapshots at or below that position count (a node rebuilding its
    /// state: none above the last position it shares with the log).
    static func loadNewest(
        sharedDirectory: String, atOrBelow bound: UInt64 = .max, logger: Logger
    ) throws -> (state: CoreDurableState, position: UInt64)? {
        let store = SnapshotStore(directory: snapshotDirectory(shared: sharedDirectory))
        guard let loaded = try store.loadNewestValid(atOrBelow: bound) else { return nil }
        for skipped in loaded.skipped {
            logger.error("skipped a damaged shared snapshot, using an older one", metadata: ["reason": "\(skipped)"])
        }
        do {
            return (try CoreDurableState(snapshotPayload: loaded.payload), loaded.lastSequence)
        } catch {
            throw ConfigurationError("the shared snapshot \(loaded.file) is not a state this version understands: \(error)")
        }
    }

    // MARK: Writing (core thread)

    /// Called between turns with the state as of log position `position`: renews (or tries to
    /// take) the lease, and, when this node holds it and the interval has passed since its last
    /// snapshot, starts one of `state` (a copy-on-write copy: O(1) here) on the snapshot thread.
    @discardableResult
    func snapshotIfDue(state: CoreDurableState, position: UInt64, coreLoop: EventLoop) -> Decision {
        let now = MonotonicClock.milliseconds()
        refreshLeaseIfDue(now: now)
        guard !inProgress else { return .inProgress }
        switch lease.state(now: now) {
        case .unknown: return .leaseUnknown
        case .heldByAnother: return .notLeaseHolder
        case .held: break
        }
        guard let newestRecorded else { return .leaseUnknown }
        guard now - lastSnapshotAt >= intervalMilliseconds, position > newestRecorded else { return .notDue }
        inProgress = true
        let store = self.store
        snapshotThread.execute {
            let started = MonotonicClock.nanoseconds()
            let outcome = Result { try store.write(payload: state.snapshotPayload, lastSequence: position) }
            let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
            coreLoop.execute { [self] in finishWriting(outcome, position: position, seconds: seconds) }
        }
        return .started
    }

    private func refreshLeaseIfDue(now: Int64) {
        // Not yet connected (a node's first turns) or Redis down: nothing to ask; a lease held
        // runs out by itself meanwhile.
        guard redis.connectedAddress != nil else { return }
        let before = lease.state(now: now)
        let asked = lease.refreshIfDue(now: now) { [self] result in
            switch result {
            case .success(true):
                if before != .held { logger.notice("this node now writes the cluster's snapshots", metadata: ["lease": "\(lease.holder)"]) }
            case .success(false):
                if before == .held { logger.notice("another node took the snapshot lease") }
            case .failure(let error):
                logger.warning("the snapshot lease could not be renewed", metadata: ["error": "\(error)"])
            }
        }
        guard asked else { return }
        // Pipelined behind the lease request: the newest recorded snapshot, so that a node taking
        // the lease over never writes one older than its predecessor's.
        redis.zrange(ClusterKeys.snapshots, from: -1, to: -1) { [self] result in
            if case .success(let newest) = result { newestRecorded = newest.last.map { UInt64($0.score) } ?? 0 }
        }
    }

    private func finishWriting(_ outcome: Result<SnapshotWriteResult, any Error>, position: UInt64, seconds: Double) {
        switch outcome {
        case .success(let written):
            metrics.lastSeconds = seconds
            logger.notice("shared snapshot written", metadata: [
                "position": "\(position)", "bytes": "\(written.byteCount)", "ms": "\(Int(seconds * 1000))",
                "files-removed": "\(written.removedFiles.count)",
            ])
            record(written, position: position)
        case .failure(let error):
            logger.error("shared snapshot failed; the log keeps everything after the last one", metadata: ["error": "\(error)"])
            finish()
        }
    }

    /// Records the new snapshot, forgets those `SnapshotStore` deleted (all below the older one
    /// it kept), and trims the log behind that older one. A failure here leaves the log longer
    /// than needed, never shorter: the next snapshot records and trims again.
    private func record(_ written: SnapshotWriteResult, position: UInt64) {
        let older = written.olderSnapshotSequence
        redis.zadd(ClusterKeys.snapshots, score: Double(position), member: written.file) { [self] added in
            if case .failure(let error) = added { return failRecording(error) }
            redis.zrange(ClusterKeys.snapshots, from: 0, to: -1) { [self] listed in
                let members: [(member: String, score: Double)]
                switch listed {
                case .success(let all): members = all
                case .failure(let error): return failRecording(error)
                }
                // Damaged files between the two kept stay on disk for the operator, not in the set.
                let stale = members.filter { $0.score < Double(position) && $0.score != Double(older) }.map(\.member)
                if !stale.isEmpty {
                    redis.zrem(ClusterKeys.snapshots, stale) { [self] removed in
                        if case .failure(let error) = removed { logger.warning("old snapshots stay listed", metadata: ["error": "\(error)"]) }
                    }
                }
                guard older > 0 else { return recorded(position: position, trimmed: 0) }
                // Pipelined behind the ZREM: its reply comes first.
                redis.xtrim(ClusterKeys.log, minimumID: RedisStreamID(milliseconds: older + 1, sequence: 0)) { [self] trimmed in
                    switch trimmed {
                    case .success(let count): recorded(position: position, trimmed: count)
                    case .failure(let error): failRecording(error)
                    }
                }
            }
        }
    }

    private func recorded(position: UInt64, trimmed: Int) {
        newestRecorded = max(newestRecorded ?? 0, position)
        metrics.position.store(position, ordering: .relaxed)
        metrics.logTrimmed.add(trimmed, ordering: .relaxed)
        logger.notice("shared snapshot recorded", metadata: ["position": "\(position)", "log-entries-trimmed": "\(trimmed)"])
        finish()
    }

    private func failRecording(_ error: RedisError) {
        logger.error("shared snapshot written but not recorded; the log is not trimmed", metadata: ["error": "\(error)"])
        finish()
    }

    private func finish() {
        inProgress = false
        lastSnapshotAt = MonotonicClock.milliseconds()
    }

    // MARK: Joining

    /// The position of the shared log's first entry (nil: the log is empty). A node whose
    /// applied position `p` is below it minus one (`isTrimmed`) missed entries trimmed away while
    /// it was gone, and must reload from the newest snapshot.
    func firstLogPosition(completion: @escaping (Result<UInt64?, RedisError>) -> Void) {
        redis.xrange(ClusterKeys.log, count: 1) { result in completion(result.map { $0.first?.id.milliseconds }) }
    }

    /// Whether the log no longer holds the entry after `applied`.
    static func isTrimmed(after applied: UInt64, firstLogPosition: UInt64?) -> Bool {
        guard let firstLogPosition else { return false }
        return firstLogPosition > applied + 1
    }

    // MARK: Shutdown (core thread)

    /// Gives the lease up and stops the snapshot thread; a snapshot still being written is left
    /// to the process's exit (its temporary file is cleared by the next write).
    func close() {
        if lease.state(now: MonotonicClock.milliseconds()) == .held { lease.release() }
        snapshotThread.stop()
        if !inProgress { snapshotThreadHandle.join() }
    }
}
