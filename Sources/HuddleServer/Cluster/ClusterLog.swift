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
    private(set) var position: UInt64 = 0
    /// Where the reader's next XREAD starts.
    private var readCursor: UInt64 = 0
    /// Entries read but not applied yet, in position order, all above `position`.
    private var inbox: [ClusterEntry] = []
    /// The reader brought entries: the runner applies them when no turn is open.
    var onEntries: () -> Void = {}
    /// The writer's connection came up (true) or went down (false).
    var onWriterStatus: (Bool) -> Void = { _ in }
    private var turnNumber: UInt64 = 0

    /// Entries one XRANGE or XREAD brings at most (a catching-up node reads in pages).
    static let pageSize = 1_000
    static let leaseMilliseconds = 3_000
    static let leaseRenewalMilliseconds: Int64 = 1_000

    init(settings: ClusterSettings, writerID: String, loop: EventLoop, metrics: ClusterMetrics, logger: Logger) {
        self.settings = settings
        self.writerID = writerID
        self.loop = loop
        self.metrics = metrics
        self.logger = logger
        writer = RedisClient(endpoint: settings.redis, loop: loop)
        reader = RedisClient(endpoint: settings.redis, loop: loop)
    }

    /// On the core loop, before its first turn.
    func start() {
        writer.onStatusChange = { [unowned self] address, error in
            metrics.writerConnected.store(address != nil, ordering: .relaxed)
            if let address {
                logger.notice("shared log writer connected to Redis", metadata: ["address": "\(address)"])
                renewLease()
            } else if let error {
                logger.error("shared log writer lost Redis", metadata: ["error": "\(error)"])
            }
            onWriterStatus(address != nil)
        }
        _ = loop.schedule(after: Self.leaseRenewalMilliseconds, repeating: Self.leaseRenewalMilliseconds) { [unowned self] in renewLease() }
        read()
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
        turnNumber += 1
        let target = position + 1
        let entry = ClusterEntry(position: target, writer: writerID, turn: turnNumber, commands: commands)
        let started = MonotonicClock.nanoseconds()
        writer.appendAt(ClusterEntry.stream, position: target, fields: entry.fields) { [self] result in
            metrics.observeAppend(seconds: Double(MonotonicClock.nanoseconds() - started) / 1e9)
            switch result {
            case .success(true):
                advance(to: target)
                outcome(.appended)
            case .success(false):
                metrics.appendConflicts.add(1, ordering: .relaxed)
                outcome(.positionTaken)
            case .failure(let error):
                outcome(.failed(error))
            }
        }
    }

    /// Reads the entries after `position` up to the log's top on the writer's connection (the
    /// reader's may be blocked), into the inbox: what a refused append missed.
    func fetchMissed(completion: @escaping (RedisError?) -> Void) {
        let from = max(position, inbox.last?.position ?? 0) + 1
        writer.xrange(ClusterEntry.stream, from: RedisStreamID(milliseconds: from, sequence: 0), count: Self.pageSize) { [self] result in
            switch result {
            case .failure(let error):
                completion(error)
            case .success(let entries):
                receive(entries)
                if entries.count == Self.pageSize { fetchMissed(completion: completion) } else { completion(nil) }
            }
        }
    }

    // MARK: Applying

    /// The inbox's entries that follow `position` without a gap, taken out; `position` moves
    /// past them (the caller applies every one).
    func takeApplicable() -> [ClusterEntry] {
        var taken: [ClusterEntry] = []
        while let first = inbox.first {
            if first.position <= position {
                inbox.removeFirst()
            } else if first.position == position + 1 {
                taken.append(inbox.removeFirst())
                position += 1
            } else {
                // Never expected (positions are contiguous): read again from where this node is.
                logger.warning("gap in the shared log read; reading it again", metadata: [
                    "position": "\(position)", "next": "\(first.position)",
                ])
                inbox.removeAll()
                readCursor = position
                break
            }
        }
        metrics.position.store(position, ordering: .relaxed)
        return taken
    }

    private func advance(to target: UInt64) {
        position = target
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
        reader.xread(
            ClusterEntry.stream, after: RedisStreamID(milliseconds: readCursor, sequence: 0), count: Self.pageSize, blockMilliseconds: 1_000
        ) { [unowned self] result in
            switch result {
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

    /// Renews `huddle:node:<name>` if this node holds it (or nobody does) and reads the log's
    /// top in the same round trip, for the lag `/healthz` judges.
    private func renewLease() {
        let arguments: [[UInt8]] = [
            Array("EVAL".utf8), Array(NodeLease.renewScript.utf8), Array("2".utf8), Array(NodeLease.key(settings.nodeName).utf8),
            Array(ClusterEntry.stream.utf8), Array(writerID.utf8), Array("\(Self.leaseMilliseconds)".utf8),
        ]
        writer.send(arguments) { [unowned self] result in
            guard case .success(let reply) = result, let parts = reply.elements, parts.count == 2,
                  let held = parts[0].integer, let top = parts[1].string.flatMap(RedisStreamID.init)
            else { return }
            if held == 0 {
                logger.error("another node holds this node's name; names must be unique per cluster", metadata: ["node": "\(settings.nodeName)"])
            }
            if top.milliseconds > metrics.top.load(ordering: .relaxed) { metrics.top.store(top.milliseconds, ordering: .relaxed) }
            metrics.topKnown.store(true, ordering: .relaxed)
        }
    }
}
