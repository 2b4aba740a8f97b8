import Glibc
import HuddleCore
import HuddleIO
import HuddleStore
import Logging

/// How the core's state reaches the disk (README, "Durability"): every command the core
/// applies is appended to the write-ahead log — one batch per core turn — and under
/// `--fsync always` made durable by an fdatasync on the sync thread while the core goes on
/// with the next turns (pipelined group commit: one sync covers every batch appended while the
/// one before it ran); the core releases a turn's replies and events once `durableSequence`
/// covers it. The whole durable state is snapshotted now and then from a copy-on-write copy,
/// on a thread of its own, after which the log before it is dropped.
///
/// Owned by the core thread, except the fdatasync (a `LogSync` with its own descriptor) and
/// the snapshot encoding and writing, which run on their threads with value copies and share
/// nothing mutable (hence the unchecked Sendable: those jobs only hop back to the core thread).
// Sendable: its state is the core thread's; the sync and snapshot threads get value copies and hop back.
final class Persistence: @unchecked Sendable {
    let directory: String
    private let log: WriteAheadLog
    private let snapshots: SnapshotStore
    private let logger: Logger
    private let snapshotIntervalMilliseconds: Int64
    private let snapshotLogBytes: Int
    private let snapshotThread: EventLoop
    private let snapshotThreadHandle: LoopThread
    /// Where `--fsync always` syncs the log, so the core never waits for the disk.
    private let syncThread: EventLoop
    private let syncThreadHandle: LoopThread
    private var syncInFlight = false
    /// A log rotation (a segment filled, or a snapshot started) running on the sync thread.
    private var rotationInFlight: LogRotation?
    /// A snapshot's write, started once the log is durable up to the sequence it claims.
    private var snapshotAwaitingDurability: (sequence: UInt64, write: () -> Void)?
    /// The core's loop and what it is told when a background sync ends (`attach`).
    private var coreLoop: EventLoop?
    private var onSynced: ((Result<UInt64, any Error>) -> Void)?
    private(set) var snapshotInProgress = false
    /// The last snapshot attempt failed: the segment started for it still begins where no
    /// snapshot reaches, so a retry starts no new one.
    private var lastSnapshotFailed = false
    private var lastSnapshotAt: Int64
    private var logBytesAtLastSnapshot: Int
    /// The last record the newest snapshot this process loaded or wrote covers.
    private var snapshotSequence: UInt64
    /// The shutdown left the snapshot thread working (a snapshot it gave up, or a periodic one
    /// still running): `close` does not wait for it.
    private var snapshotThreadBusyAtExit = false

    /// Opens the data directory (created if missing) and rebuilds the core from it: the newest
    /// valid snapshot, then every logged command after it. A torn final record is cut off (and
    /// logged); a corrupt record anywhere else stops the start with the file and offset.
    static func open(configuration: ServerConfiguration, logger: Logger) throws -> (Persistence, HuddleCore) {
        let directory = configuration.dataDirectory
        let snapshots = SnapshotStore(directory: directory)
        var state = CoreDurableState()
        var snapshotSequence: UInt64 = 0
        if let loaded = try snapshots.loadNewestValid() {
            for skipped in loaded.skipped {
                logger.error("skipped a damaged snapshot, using an older one", metadata: ["reason": "\(skipped)"])
            }
            state = try decodeSnapshot(loaded.payload)
            snapshotSequence = loaded.lastSequence
            logger.notice("loaded snapshot", metadata: ["file": "\(loaded.file)", "sequence": "\(loaded.lastSequence)"])
        }
        if let fifo = getenv("HUDDLE_TEST_SYNC_GATE").map({ String(cString: $0) }), !fifo.isEmpty {
            try LogSyncGate.install(fifo: fifo) { sequence in
                logger.notice("test sync gate holds a sync", metadata: ["sequence": "\(sequence)"])
            }
        }
        let log = try WriteAheadLog(directory: directory, syncPolicy: configuration.syncPolicy, snapshotSequence: snapshotSequence)
        if let tail = log.recoveryReport.truncatedTail {
            logger.warning("cut a torn record off the end of the log (a crash mid-write)", metadata: [
                "file": "\(tail.file)", "offset": "\(tail.offset)", "bytes": "\(tail.bytesRemoved)", "reason": "\(tail.reason)",
            ])
        }
        let core = HuddleCore(configuration: configuration.core, restoring: state)
        let replayed = try replay(log, after: snapshotSequence, into: core)
        logger.notice("recovered", metadata: [
            "data-dir": "\(directory)", "snapshot-sequence": "\(snapshotSequence)", "replayed": "\(replayed)",
            "users": "\(core.durableState.accounts.count)", "channels": "\(core.durableState.channels.byName.count)",
        ])
        let persistence = try Persistence(
            directory: directory, log: log, snapshots: snapshots, snapshotSequence: snapshotSequence, configuration: configuration, logger: logger)
        return (persistence, core)
    }

    private init(
        directory: String, log: WriteAheadLog, snapshots: SnapshotStore, snapshotSequence: UInt64, configuration: ServerConfiguration, logger: Logger
    ) throws {
        self.snapshotSequence = snapshotSequence
        self.directory = directory
        self.log = log
        self.snapshots = snapshots
        self.logger = logger
        snapshotIntervalMilliseconds = Int64(configuration.snapshotIntervalMilliseconds)
        snapshotLogBytes = configuration.snapshotLogBytes
        snapshotThread = try EventLoop(index: -1, readBufferSize: 16)
        snapshotThreadHandle = try LoopThread.spawn(name: "huddle-snapshot") { [snapshotThread] in snapshotThread.run() }
        // Encoding a large state is seconds of CPU in one burst: at nice 10 it takes what the
        // core and the I/O loops leave, instead of the CPU their replies wait for (publish p99
        // during a snapshot: README, "Snapshots"). On Linux the nice value is per thread, and
        // who = 0 is the calling one.
        snapshotThread.execute { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10) }
        syncThread = try EventLoop(index: -1, readBufferSize: 16)
        syncThreadHandle = try LoopThread.spawn(name: "huddle-sync") { [syncThread] in syncThread.run() }
        lastSnapshotAt = MonotonicClock.milliseconds()
        logBytesAtLastSnapshot = log.byteCount
    }

    private static func replay(_ log: WriteAheadLog, after sequence: UInt64, into core: HuddleCore) throws -> Int {
        let reader = try log.records(after: sequence)
        var count = 0
        while let record = try reader.next() {
            let command: CoreCommand
            do {
                command = try CoreCommand(logRecord: record.payload)
            } catch {
                throw ConfigurationError("log record \(record.sequence) is not a command this version understands: \(error)")
            }
            core.apply(command)
            count += 1
        }
        return count
    }

    /// The state in a snapshot of any format this version reads (`PersistedRecord`).
    private static func decodeSnapshot(_ payload: [UInt8]) throws -> CoreDurableState {
        do {
            return try CoreDurableState(snapshotPayload: payload)
        } catch {
            throw ConfigurationError("the snapshot is not a state this version understands: \(error)")
        }
    }

    // MARK: Logging commands

    /// Tells the persistence which loop is the core's and what to call there when a background
    /// sync ends: the sequence now durable, or the error after which the log refuses writes.
    func attach(coreLoop: EventLoop, onSynced: @escaping (Result<UInt64, any Error>) -> Void) {
        self.coreLoop = coreLoop
        self.onSynced = onSynced
        // Every policy: a rotation syncs the segment it closes, whatever the policy says.
        log.rotatesOnAnotherThread = true
    }

    /// Appends one core turn's commands as one batch. Under `--fsync always` a sync on the sync
    /// thread makes it durable (started now, or right after the one running), and the turn's
    /// outputs wait for `acknowledgedSequence`; `everysec` and `no` sync here as their policy
    /// says, and their replies do not wait.
    func append(_ commands: [CoreCommand]) throws {
        try log.append(commands.map { $0.logRecord })
        if log.segmentIsFull {
            do {
                try startRotation()
            } catch {
                logger.error("cannot start a new log segment; the log goes on in the current one", metadata: ["error": "\(error)"])
            }
        }
        if syncsInBackground {
            startSync()
        } else if rotationInFlight == nil {
            try log.syncIfDue()
        }
    }

    /// Whether syncs run on the sync thread: `--fsync always` with the core attached.
    private var syncsInBackground: Bool { log.syncPolicy == .always && coreLoop != nil }

    /// The newest sequence whose outputs may be sent: durable under `--fsync always`, else
    /// appended (the other policies acknowledge before the disk has it).
    var acknowledgedSequence: UInt64 { syncsInBackground ? log.durableSequence : log.lastSequence }

    /// One sync at a time: those appended while it runs go with the next (group commit). None
    /// while a rotation runs: it syncs the segment it closes, and what comes after waits for it.
    private func startSync() {
        guard !syncInFlight, rotationInFlight == nil, let coreLoop else { return }
        let sync: LogSync
        do {
            guard let started = try log.beginSync() else { return }
            sync = started
        } catch {
            onSynced?(.failure(error))
            return
        }
        syncInFlight = true
        syncThread.execute {
            let outcome = sync.perform()
            coreLoop.execute { [self] in finishSync(sync, outcome) }
        }
    }

    private func finishSync(_ sync: LogSync, _ outcome: Result<Void, StoreError>) {
        syncInFlight = false
        do {
            try log.finishSync(sync, outcome)
        } catch {
            onSynced?(.failure(error))
            return
        }
        startSync()
        startSnapshotNowDurable()
        onSynced?(.success(log.durableSequence))
    }

    /// Rotates the log on the sync thread (after the sync running there, if any): the core goes
    /// on applying, its records held by the log until the new segment exists, its outputs held
    /// until they are durable, like any others.
    private func startRotation() throws {
        guard rotationInFlight == nil, let coreLoop, let rotation = try log.beginRotation() else { return }
        rotationInFlight = rotation
        syncThread.execute {
            rotation.perform()
            coreLoop.execute { [self] in finishRotation(rotation) }
        }
    }

    private func finishRotation(_ rotation: LogRotation) {
        guard rotationInFlight === rotation else { return }  // the shutdown finished it
        rotationInFlight = nil
        do {
            if let error = try log.finishRotation(rotation) {
                logger.error("cannot start a new log segment; the log goes on in the current one", metadata: ["error": "\(error)"])
            }
        } catch {
            // Under every policy: a failed fdatasync leaves nothing to trust in memory either.
            onSynced?(.failure(error))
            return
        }
        if syncsInBackground { startSync() }
        startSnapshotNowDurable()
        onSynced?(.success(log.durableSequence))
    }

    /// Finishes on this thread a rotation running on the sync thread, waiting for it: before
    /// the shutdown syncs, and before the state is rebuilt from disk (the records it holds go
    /// to the files first).
    private func finishRotationInFlight() throws {
        guard let rotation = rotationInFlight else { return }
        // The sync thread runs until `close`; a rotation is one fdatasync and a file creation.
        while rotation.outcome == nil { usleep(1_000) }
        rotationInFlight = nil
        if let error = try log.finishRotation(rotation) {
            logger.error("cannot start a new log segment; the log goes on in the current one", metadata: ["error": "\(error)"])
        }
    }

    /// Under `everysec` and `no` replies do not wait for the disk, nor does the snapshot for
    /// more than its rotation.
    private func startSnapshotNowDurable() {
        guard let (sequence, write) = snapshotAwaitingDurability, rotationInFlight == nil,
              !syncsInBackground || log.durableSequence >= sequence
        else { return }
        snapshotAwaitingDurability = nil
        write()
    }

    /// The sequence of the newest record in the log: how far the durable history has come.
    var logPosition: UInt64 { log.lastSequence }

    /// The periodic tick: `everysec` syncs here when a burst has ended (`always` needs no tick:
    /// every append starts or queues a background sync).
    func tick() throws {
        guard !syncsInBackground, rotationInFlight == nil else { return }
        try log.syncIfDue()
    }

    /// Syncs on the calling (core) thread whatever is not yet durable: the shutdown's last word.
    func syncNow() throws {
        try finishRotationInFlight()
        try log.sync()
    }

    /// Rebuilds the durable state from disk: what a restart would see. Used to take back
    /// changes the log refused to record.
    func durableStateOnDisk(configuration: CoreConfiguration) throws -> CoreDurableState {
        try finishRotationInFlight()
        var state = CoreDurableState()
        var sequence: UInt64 = 0
        if let loaded = try snapshots.loadNewestValid() {
            state = try Self.decodeSnapshot(loaded.payload)
            sequence = loaded.lastSequence
        }
        let core = HuddleCore(configuration: configuration, restoring: state)
        _ = try Self.replay(log, after: sequence, into: core)
        return core.durableState
    }

    /// Whether the disk takes writes again: a 64 KiB probe file written, synced and removed.
    func diskAcceptsWrites() -> Bool {
        let path = directory + "/.write-probe"
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer {
            Glibc.close(fd)
            unlink(path)
        }
        let probe = [UInt8](repeating: 0, count: 64 * 1024)
        return probe.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == probe.count && fsync(fd) == 0
    }

    // MARK: Snapshots

    /// Whether it is time for a snapshot: by age or by the log's growth since the last one.
    func snapshotDue(now: Int64) -> Bool {
        guard !snapshotInProgress else { return false }
        return now - lastSnapshotAt >= snapshotIntervalMilliseconds || log.byteCount - logBytesAtLastSnapshot >= snapshotLogBytes
    }

    /// Starts a snapshot of `state` (a copy-on-write copy: O(1) here) on the snapshot thread;
    /// `completion` runs back on the core thread, where the log before the previous snapshot
    /// is dropped.
    /// `forgettingTheFallback`: a deletion's snapshot — once written, the older snapshot and the
    /// whole log before this one are removed too, so nothing on disk holds what was deleted.
    func beginSnapshot(
        of state: CoreDurableState, coreLoop: EventLoop, forgettingTheFallback: Bool = false, completion: @escaping @Sendable () -> Void
    ) {
        let sequence = log.lastSequence
        do {
            // A new segment per attempt lets the next snapshot drop the log before this one
            // whole. After a failure that boundary is still there to use; a new segment per
            // retry would pile up segments nothing trims (on a full disk, until it is full).
            // With the core attached the rotation runs on the sync thread (one already running
            // for a full segment serves as this one's boundary).
            if !lastSnapshotFailed {
                if self.coreLoop != nil { try startRotation() } else { try log.rotate() }
            }
        } catch {
            logger.error("snapshot skipped: cannot start a new log segment", metadata: ["error": "\(error)"])
            return
        }
        snapshotInProgress = true
        let snapshots = self.snapshots
        let logger = self.logger
        logger.notice("snapshot started", metadata: ["sequence": "\(sequence)"])
        let write = { [self, snapshotThread] in
            snapshotThread.execute {
                let started = MonotonicClock.milliseconds()
                let outcome: Result<SnapshotWriteResult, any Error> = Result {
                    try snapshots.write(payload: state.snapshotPayload, lastSequence: sequence)
                }
                let elapsed = MonotonicClock.milliseconds() - started
                coreLoop.execute { [self] in
                    finishSnapshot(outcome, sequence: sequence, milliseconds: elapsed, forgettingTheFallback: forgettingTheFallback, logger: logger)
                    completion()
                }
            }
        }
        // A snapshot claims its records only once the log has them durable: written earlier, a
        // crash could leave a snapshot holding writes no one was answered for.
        snapshotAwaitingDurability = (sequence, write)
        if syncsInBackground { startSync() }
        startSnapshotNowDurable()
    }

    private func finishSnapshot(
        _ outcome: Result<SnapshotWriteResult, any Error>, sequence: UInt64, milliseconds: Int64, forgettingTheFallback: Bool, logger: Logger
    ) {
        snapshotInProgress = false
        lastSnapshotAt = MonotonicClock.milliseconds()
        switch outcome {
        case .success(let result):
            lastSnapshotFailed = false
            snapshotSequence = sequence
            do {
                // Keep the log after the *older* snapshot, so a fall-back to it still replays —
                // unless a deletion must leave the disk now.
                let removed = try log.removeSegments(upTo: forgettingTheFallback ? sequence : result.olderSnapshotSequence)
                if forgettingTheFallback { try snapshots.removeSnapshots(below: sequence) }
                logBytesAtLastSnapshot = log.byteCount
                logger.notice("snapshot written", metadata: [
                    "sequence": "\(sequence)", "bytes": "\(result.byteCount)", "ms": "\(milliseconds)", "segments-removed": "\(removed.count)",
                ])
            } catch {
                logger.error("snapshot written, but old log segments could not be removed", metadata: ["error": "\(error)"])
            }
        case .failure(let error):
            lastSnapshotFailed = true
            // Retried after the interval or as much log again, not on every turn.
            logBytesAtLastSnapshot = log.byteCount
            logger.error("snapshot failed; the log keeps everything", metadata: ["error": "\(error)"])
        }
    }

    /// The end of the core (nothing else runs on it any more): syncs the log — from here on it
    /// holds every change, whatever else happens — then snapshots `state` if the log grew since
    /// the last snapshot, but only until `deadline` (monotonic ms, the exit budget's end). A
    /// snapshot not finished by then is given up and its temporary file removed: the next start
    /// replays the log instead. The snapshot thread is then left to the process's exit.
    func shutDown(of state: CoreDurableState, deadline: Int64) {
        // A periodic snapshot still running keeps the thread until it ends; one queued behind it
        // waits for it, within the deadline.
        snapshotThreadBusyAtExit = snapshotInProgress
        snapshotAwaitingDurability = nil
        do {
            try finishRotationInFlight()
            try log.sync()
        } catch {
            logger.error("the log could not be synced at shutdown", metadata: ["error": "\(error)"])
            return
        }
        let sequence = log.lastSequence
        guard sequence > snapshotSequence else { return }
        let started = MonotonicClock.milliseconds()
        guard started < deadline else {
            logger.notice("shutdown snapshot skipped: no time left in the exit budget; the log holds every change", metadata: [
                "sequence": "\(sequence)",
            ])
            return
        }
        let attempt = ShutdownSnapshot()
        let snapshots = self.snapshots
        snapshotThread.execute {
            guard attempt.continuing else { return }
            attempt.finish(Result {
                try snapshots.write(payload: state.snapshotPayload, lastSequence: sequence, continuing: { attempt.continuing })
            })
        }
        let milliseconds = { MonotonicClock.milliseconds() - started }
        let outcome = attempt.wait(until: deadline)
        // Finished either way: the thread got through what was queued before it.
        snapshotThreadBusyAtExit = outcome == nil
        switch outcome {
        case .success(let result):
            do {
                _ = try log.removeSegments(upTo: result.olderSnapshotSequence)
            } catch {
                logger.error("shutdown snapshot written, but old log segments could not be removed", metadata: ["error": "\(error)"])
            }
            logger.notice("shutdown snapshot written", metadata: [
                "sequence": "\(sequence)", "bytes": "\(result.byteCount)", "ms": "\(milliseconds())",
            ])
        case .failure(let error):
            logger.error("shutdown snapshot failed; the log still holds every change", metadata: ["error": "\(error)"])
        case nil:
            snapshots.removeUnfinished(lastSequence: sequence)
            logger.notice("shutdown snapshot abandoned: the exit budget ran out; the log holds every change", metadata: [
                "sequence": "\(sequence)", "ms": "\(milliseconds())",
            ])
        }
    }

    func close() {
        syncThread.stop()
        syncThreadHandle.join()
        snapshotThread.stop()
        // A snapshot still encoding is ended by the process's exit, not waited for.
        if !snapshotThreadBusyAtExit { snapshotThreadHandle.join() }
        try? log.close()
    }
}
