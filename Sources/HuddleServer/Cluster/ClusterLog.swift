import Glibc
import HuddleCore
import HuddleCrypto
import HuddleIO
import HuddleRedis
import Logging
import Synchronization

/// This node's end of the shared log (docs/ARCHITECTURE.md, "Cluster mode"): two Redis
/// connections on the core's loop — the writer (compare-and-append of each turn, the node's
/// lease) and the reader (XREAD BLOCK) — and the position of the last entry applied here.
///
/// Core thread only. It decides nothing about the core: it hands entries over
/// (`takeApplicable`) and reports each append's outcome; `CoreRunner+Cluster` does the turn.
final class ClusterLog {
    enum AppendOutcome {
        case appended
        /// Another node took the position first: the turn was decided on a stale state.
        case positionTaken
        /// Not written: this node's state must be rebuilt first (`rebuild`), or the log lost
        /// entries this node applied (`rebuild` is set now).
        case rebuilding
        /// Not written (`notConnected`), or unknown whether written (`connectionLost`).
        case failed(RedisError)
    }

    let settings: ClusterSettings
    /// The writer of this node's entries and the value of its lease: node name and boot nonce.
    let writerID: String
    let metrics: ClusterMetrics
    private let loop: EventLoop
    private let logger: Logger
    private let writer: RedisClient
    private let reader: RedisClient
    /// The last entry applied here.
    private(set) var position: UInt64
    /// Where the reader's next XREAD starts.
    private var readCursor: UInt64 = 0
    /// Entries read but not applied yet, in position order, all above `position`.
    private var inbox: [ClusterEntry] = []
    /// The entry at `position`, when this node knows which it is (not after loading a
    /// snapshot, until it applies the next entry): what its next append must sit on.
    private(set) var lastApplied: ClusterEntry.Identity?
    /// Set when this node's state can no longer go on from the log: the runner rebuilds it from
    /// a snapshot and the log (`CoreRunner+Cluster`), then calls `restart(at:)`.
    private(set) var rebuild: Rebuild?
    /// A read found entries above `position + 1`: the log's first entry was asked to tell a
    /// trim from a gap, and applying waits for the answer.
    private var gapChecked = false
    /// Counts `restart(at:)`s: a read sent before one is answered for a position no longer held.
    private var epoch = 0
    /// The reader brought entries: the runner applies them when no turn is open.
    var onEntries: () -> Void = {}
    /// The writer's connection came up or a lease renewal (a write) was answered (true), or
    /// the connection went down (false).
    var onWriterStatus: (Bool) -> Void = { _ in }
    private var turnNumber: UInt64 = 0
    /// Where the turn's WAIT stands (`--redis-wait-replicas`).
    private var replicaWait = ReplicaWait.idle

    enum ReplicaWait {
        /// No append in flight, or its outcome is given.
        case idle
        /// The append and its WAIT are sent; the append's reply has not come.
        case appendSent
        /// The WAIT was answered before the append's reply: the script was not in Redis's
        /// cache (a restarted or failed-over Redis), and `evaluate` sent it again, behind the
        /// WAIT, which thus did not count the entry.
        case waitAnsweredFirst
        /// The append landed; its WAIT decides.
        case appended
    }

    var writerConnected: Bool { writer.connectedAddress != nil }
    /// This node holds `huddle:ticker` (as of the last renewal): it decides `tick`'s durable part.
    private(set) var isTicker = false

    /// Entries one XRANGE or XREAD brings at most (a catching-up node reads in pages).
    static let pageSize = 1_000

    /// Why this node's state must be rebuilt from a snapshot and the log.
    enum Rebuild: Equatable {
        /// The log no longer holds the entry after `position`: it was trimmed behind a snapshot
        /// while this node was away (partitioned or stopped for longer than the snapshots keep).
        /// `firstInLog` is the log's first entry, `top` the highest one this node read.
        case trimmed(firstInLog: UInt64, top: UInt64)
        /// The log lost entries this node applied: a Redis failover promoted a replica that
        /// never had them (their append was refused by WAIT, so never acknowledged). Only the
        /// state up to `keptUpTo` is the other nodes' too.
        case lostEntries(keptUpTo: UInt64)
    }
    static let leaseMilliseconds = 3_000
    static let leaseRenewalMilliseconds: Int64 = 1_000

    /// `position`: the log position of the state the node starts from (its snapshot's; 0: empty).
    init(settings: ClusterSettings, writerID: String, position: UInt64, loop: EventLoop, metrics: ClusterMetrics, logger: Logger) {
        self.settings = settings
        self.position = position
        readCursor = position
        metrics.position.store(position, ordering: .relaxed)
        self.writerID = writerID
        self.loop = loop
        self.metrics = metrics
        self.logger = logger
        writer = RedisClient(endpoint: settings.redis, loop: loop)
        reader = RedisClient(endpoint: settings.redis, loop: loop)
    }

    /// On the core loop, before its first turn.
    func start() {
        writer.onStatusChange = { [unowned self] address, error in writerStatusChanged(address, error) }
        // Connected already if the connect finished within the client's first task.
        if let address = writer.connectedAddress { writerStatusChanged(address, nil) }
        _ = loop.schedule(after: Self.leaseRenewalMilliseconds, repeating: Self.leaseRenewalMilliseconds) { [unowned self] in renewLease() }
        read()
    }

    private func writerStatusChanged(_ address: RedisAddress?, _ error: RedisError?) {
        metrics.writerConnected.store(address != nil, ordering: .relaxed)
        if let address {
            logger.notice("shared log writer connected to Redis", metadata: ["address": "\(address)"])
            renewLease()
        } else if let error {
            logger.error("shared log writer lost Redis", metadata: ["error": "\(error)"])
        }
        onWriterStatus(address != nil)
    }

    func close() {
        writer.close()
        reader.close()
    }

    // MARK: Appending

    /// Appends `commands` as this node's next turn at `position + 1`. One at a time: the next
    /// only after this one's outcome (a second one behind it could land on top of another
    /// node's entry if this one lost).
    func append(_ commands: [CoreCommand], outcome: @escaping (AppendOutcome) -> Void) {
        guard rebuild == nil else {
            _ = loop.schedule(after: 0) { outcome(.rebuilding) }
            return
        }
        turnNumber += 1
        let target = position + 1
        let built = position
        let entry = ClusterEntry(position: target, writer: writerID, turn: turnNumber, commands: commands, after: lastApplied)
        let started = MonotonicClock.nanoseconds()
        let expectingTop = lastApplied?.fields ?? []
        if settings.waitReplicas > 0 { replicaWait = .appendSent }
        writer.appendAt(ClusterKeys.log, position: target, expectingTop: expectingTop, fields: entry.fields) { [self] result in
            if settings.waitReplicas > 0, case .success(.appended) = result {
                // The WAIT behind it decides; if it was answered already, it ran before the
                // append and one more is needed.
                let again = replicaWait == .waitAnsweredFirst
                replicaWait = .appended
                if again { awaitReplicas(for: entry, started: started, outcome: outcome) }
                return
            }
            replicaWait = .idle
            metrics.observeAppend(seconds: Double(MonotonicClock.nanoseconds() - started) / 1e9)
            switch result {
            case .success(.appended):
                advance(to: target, applied: entry.identity)
                outcome(.appended)
            case .success(.refused(let top)) where top.milliseconds >= target:
                metrics.appendConflicts.add(1, ordering: .relaxed)
                outcome(.positionTaken)
            case .success(.refused(let top)):
                lost(keptUpTo: top.milliseconds, position: built, because: "the log's top is below this node's position")
                outcome(.rebuilding)
            case .success(.topReplaced):
                lost(keptUpTo: max(built, 1) - 1, position: built, because: "the log's entry at this node's position is not the one it applied")
                outcome(.rebuilding)
            case .failure(let error):
                outcome(.failed(error))
            }
        }
        // Pipelined behind the append on the same connection: one round trip, and WAIT counts
        // the replicas that have this connection's writes so far, the entry included.
        if settings.waitReplicas > 0 { awaitReplicas(for: entry, started: started, outcome: outcome) }
    }

    /// WAIT for the replicas `--redis-wait-replicas` asks, for the turn's append sent before it.
    private func awaitReplicas(for entry: ClusterEntry, started: UInt64, outcome: @escaping (AppendOutcome) -> Void) {
        let wait = ["WAIT", "\(settings.waitReplicas)", "\(ClusterSettings.waitMilliseconds)"].map { Array($0.utf8) }
        writer.send(wait, blockingFor: Int64(ClusterSettings.waitMilliseconds)) { [self] result in
            switch replicaWait {
            case .appended: replicaWait = .idle
            case .appendSent:
                replicaWait = .waitAnsweredFirst
                return
            case .idle, .waitAnsweredFirst:
                return  // the append did not land: its outcome is given
            }
            metrics.observeAppend(seconds: Double(MonotonicClock.nanoseconds() - started) / 1e9)
            switch result {
            case .success(let reply) where (reply.integer ?? 0) >= Int64(settings.waitReplicas):
                advance(to: entry.position, applied: entry.identity)
                outcome(.appended)
            case .success(let reply):
                // In the log but not on enough replicas: not answered ok, and applied by the
                // reader like any entry (this node's position did not move).
                metrics.waitShortfalls.add(1, ordering: .relaxed)
                outcome(.failed(.server(
                    "WAIT: \(reply.integer ?? 0) of \(settings.waitReplicas) replicas had the entry within \(ClusterSettings.waitMilliseconds) ms")))
            case .failure(let error):
                outcome(.failed(error))
            }
        }
    }

    /// Reads the entries after `position` up to the log's top on the writer's connection (the
    /// reader's may be blocked), into the inbox: what a refused append missed.
    func fetchMissed(completion: @escaping (RedisError?) -> Void) {
        let from = max(position, inbox.last?.position ?? 0) + 1
        writer.xrange(ClusterKeys.log, from: RedisStreamID(milliseconds: from, sequence: 0), count: Self.pageSize) { [self] result in
            switch result {
            case .failure(let error):
                completion(error)
            case .success(let entries):
                receive(entries)
                if entries.count == Self.pageSize { fetchMissed(completion: completion) } else { completion(nil) }
            }
        }
    }

    /// The newest position this node has read (applied or in the inbox).
    var knownTop: UInt64 { max(position, inbox.last?.position ?? 0) }

    // MARK: Applying

    /// The inbox's entries that follow `position` without a gap, taken out; `position` moves
    /// past them (the caller applies every one). Stops at an entry appended on another entry
    /// than the one applied here at its position (`rebuild` is set), and at a gap (the log's
    /// first entry is asked whether it is a trim).
    func takeApplicable() -> [ClusterEntry] {
        var taken: [ClusterEntry] = []
        while rebuild == nil, let first = inbox.first {
            if first.position <= position {
                inbox.removeFirst()
            } else if first.position == position + 1 {
                if let after = first.after, let lastApplied, after != lastApplied {
                    lost(keptUpTo: position - 1, position: position, because: "the log's entry at this node's position is not the one it applied", entry: first)
                    break
                }
                taken.append(inbox.removeFirst())
                position += 1
                lastApplied = first.identity
            } else {
                checkGap(before: first.position)
                break
            }
        }
        metrics.position.store(position, ordering: .relaxed)
        return taken
    }

    /// The read's first entry is above `position + 1`. Positions are contiguous and every read
    /// starts right after `position`, so the log's first entry tells: above `position + 1`, the
    /// entries in between were trimmed behind a snapshot; at or below, the log has a gap, which
    /// a compare-and-append never makes (an append by something else: a node of an older
    /// version, or a hand-made XADD). Applying around a gap would make this node's state the
    /// others' only by chance: the node stops (exit 70) for the operator.
    private func checkGap(before firstRead: UInt64) {
        guard !gapChecked else { return }
        gapChecked = true
        let asked = epoch
        writer.xrange(ClusterKeys.log, count: 1) { [self] result in
            guard asked == epoch, gapChecked else { return }
            guard case .success(let entries) = result, let firstInLog = entries.first?.id.milliseconds else {
                // Not answered (Redis away), or the log is empty now: ask again shortly.
                _ = loop.schedule(after: 100) { [self] in
                    guard asked == epoch, gapChecked else { return }
                    gapChecked = false
                    onEntries()
                }
                return
            }
            if firstInLog > position + 1 {
                logger.warning("the shared log is trimmed past this node's position", metadata: [
                    "position": "\(position)", "first-in-log": "\(firstInLog)",
                ])
                rebuild = .trimmed(firstInLog: firstInLog, top: knownTop)
                inbox.removeAll()
                onEntries()
            } else {
                logger.critical("the shared log has a gap that is not a trim (an append without compare-and-append); exiting", metadata: [
                    "position": "\(position)", "first-in-log": "\(firstInLog)", "next-entry-read": "\(firstRead)",
                ])
                exit(70)
            }
        }
    }

    /// The log lost entries this node applied: nothing more is applied or appended on this
    /// state; the runner rebuilds it.
    private func lost(keptUpTo: UInt64, position: UInt64, because reason: String, entry: ClusterEntry? = nil) {
        guard rebuild == nil else { return }
        logger.error("the shared log lost entries this node applied (a Redis failover); rebuilding from a snapshot and the log", metadata: [
            "reason": "\(reason)", "position": "\(position)", "kept-up-to": "\(keptUpTo)",
            "applied-here": "\(lastApplied?.description ?? "?")", "in-log": "\(entry?.after?.description ?? "?")",
        ])
        metrics.lostEntryRebuilds.add(1, ordering: .relaxed)
        rebuild = .lostEntries(keptUpTo: keptUpTo)
        inbox.removeAll()
    }

    /// The node's state was replaced by the one at `snapshotPosition` (a snapshot's, or empty
    /// at 0): reading and applying go on from there.
    func restart(at snapshotPosition: UInt64) {
        epoch += 1
        position = snapshotPosition
        readCursor = snapshotPosition
        lastApplied = nil
        rebuild = nil
        gapChecked = false
        inbox.removeAll()
        metrics.position.store(position, ordering: .relaxed)
    }

    private func advance(to target: UInt64, applied: ClusterEntry.Identity) {
        position = target
        lastApplied = applied
        inbox.removeAll { $0.position <= target }
        metrics.position.store(position, ordering: .relaxed)
        if target > metrics.top.load(ordering: .relaxed) { metrics.top.store(target, ordering: .relaxed) }
    }

    private func receive(_ entries: [RedisStreamEntry]) {
        for raw in entries {
            let entry: ClusterEntry
            do {
                entry = try ClusterEntry(raw)
            } catch {
                // Applying around it would make this node's state differ from every other's.
                logger.critical("cannot read the shared log; exiting", metadata: ["error": "\(error)"])
                exit(70)
            }
            guard entry.position > position, entry.position > (inbox.last?.position ?? 0) else { continue }
            inbox.append(entry)
            if entry.position > metrics.top.load(ordering: .relaxed) { metrics.top.store(entry.position, ordering: .relaxed) }
        }
    }

    /// The reader: XREAD BLOCK from the cursor, forever, on its own connection.
    private func read() {
        readCursor = max(readCursor, position)
        let asked = epoch
        reader.xread(
            ClusterKeys.log, after: RedisStreamID(milliseconds: readCursor, sequence: 0), count: Self.pageSize, blockMilliseconds: 1_000
        ) { [unowned self] result in
            switch result {
            case .success where asked != epoch:
                read()  // read from a position the node left: again from the new one
            case .success(let entries):
                if let last = entries.last { readCursor = max(readCursor, last.id.milliseconds) }
                receive(entries)
                if !inbox.isEmpty { onEntries() }
                read()
            case .failure:
                // Down: the client reconnects by itself; try again shortly.
                _ = loop.schedule(after: 100) { [unowned self] in read() }
            }
        }
    }

    // MARK: The node's lease

    /// Renews `huddle:node:<name>` if this node holds it (or nobody does), the ticker lease
    /// likewise, and reads the log's top in the same round trip, for the lag `/healthz` judges.
    private func renewLease() {
        // Everything applied by now was in the log before the script runs (the reader's entries
        // were read from it, this node's appends precede it on this connection): a top below
        // this is a log that lost entries.
        let applied = position
        let asked = epoch
        let arguments: [[UInt8]] = [
            Array("EVAL".utf8), Array(NodeLease.renewScript.utf8), Array("3".utf8), Array(NodeLease.key(settings.nodeName).utf8),
            Array(ClusterKeys.log.utf8), Array(NodeLease.tickerKey.utf8), Array(writerID.utf8), Array("\(Self.leaseMilliseconds)".utf8),
        ]
        writer.send(arguments) { [unowned self] result in
            guard case .success(let reply) = result, let parts = reply.elements, parts.count == 3,
                  let held = parts[0].integer, let top = parts[1].string.flatMap(RedisStreamID.init), let ticking = parts[2].integer
            else { return }
            if (ticking == 1) != isTicker {
                isTicker = ticking == 1
                logger.notice(isTicker ? "this node is the cluster's ticker" : "this node is no longer the cluster's ticker")
            }
            // A script that writes answered: Redis takes writes (loaded, a master), whatever
            // refused a turn since; writes must not stay refused while the writer is up.
            onWriterStatus(true)
            if held == 0 {
                logger.error("another node holds this node's name; names must be unique per cluster", metadata: ["node": "\(settings.nodeName)"])
            }
            if top.milliseconds > metrics.top.load(ordering: .relaxed) { metrics.top.store(top.milliseconds, ordering: .relaxed) }
            metrics.topKnown.store(true, ordering: .relaxed)
            if top.milliseconds < applied, asked == epoch {
                lost(keptUpTo: top.milliseconds, position: applied, because: "the log's top is below this node's position")
                onEntries()
            }
        }
    }
}
