import Glibc

/// The append-only log of opaque records, numbered 1, 2, 3… with no gap: the truth from which the
/// state is rebuilt (newest valid snapshot + the records after it).
///
/// Files (README.md has the byte layout): `wal-<first sequence>.log` segments, each created
/// complete (header written and synced under a `.tmp` name, then renamed), and `wal.lock`, held
/// with flock(2) while the log is open so two servers can never append to one directory.
///
/// Durability: `append` writes a whole batch with one pwrite(2) and returns; the records are
/// durable once `durableSequence` reaches them, which `sync()` (fdatasync) or `syncIfDue(now:)`
/// (per `syncPolicy`) brings about. Under `.always` the caller syncs after every append and
/// replies only then — or hands the sync to another thread (`beginSync`, `LogSync`,
/// `finishSync`) and goes on appending meanwhile, replying once `durableSequence` covers it.
///
/// Failures:
/// - A failed append (ENOSPC, EIO, EFBIG…) is truncated away again before it throws, so the file
///   ends on the last complete record and a later append continues a valid log.
/// - A failed fdatasync makes the log refuse all further writes (`StoreError.logUnusable`): after
///   a failed fsync Linux may already have dropped the dirty pages, so neither retrying nor
///   truncating can tell what is on the disk. Reopen (restart) to recover from what is there.
/// - Either way the records already in the log stay readable through `records(after:)`.
///
/// Not thread-safe: one thread (the core's) owns the log. `SnapshotStore` shares nothing with
/// it and may write on another thread at the same time.
public final class WriteAheadLog {
    /// The largest payload one record may carry; larger appends throw `recordTooLarge`.
    public static let maximumRecordPayload = LogFormat.maximumRecordPayload
    /// Appends go to a new segment once the current one would grow past this.
    public static let defaultSegmentSizeLimit = 64 << 20
    /// The period of `.everySecond`, in milliseconds.
    public static let everySecondInterval: Int64 = 1000

    public let directory: String
    public let syncPolicy: SyncPolicy
    public let segmentSizeLimit: Int
    /// What opening the log found: tail cut, temporary files removed, and so on.
    public let recoveryReport: RecoveryReport
    /// The newest record in the log (or the snapshot's sequence when the log holds nothing newer).
    public private(set) var lastSequence: UInt64
    /// Every record up to this one is on the disk (fdatasync returned).
    public private(set) var durableSequence: UInt64

    private enum Condition: Equatable {
        case writable
        case failed(String)
        case closed
    }

    private var condition = Condition.writable
    private var closedSegments: [LogSegmentInfo]
    private var active: LogSegmentInfo
    private var activeFD: Int32
    private let lockFD: Int32
    /// A failed append left bytes past the last record that ftruncate could not remove yet.
    private var tailNeedsTruncation = false
    private var lastSyncTime: Int64
    /// The encoded batch, reused across appends; capacity is dropped after an unusually large one.
    private var batch: [UInt8] = []
    private static let retainedBatchCapacity = 1 << 20
    /// The rotation running on another thread (`beginRotation`), and the records appended since
    /// it began, encoded: in no file until `finishRotation` writes them to the new segment.
    private var rotation: LogRotation?
    private var held: [UInt8] = []

    /// When set, `append` never rotates by itself: the owner sees `segmentIsFull` and rotates
    /// with `beginRotation` on another thread. Unset, a full segment is rotated inside `append`.
    public var rotatesOnAnotherThread = false

    /// Opens the log in `directory` (created if missing), recovering it first:
    /// - leftover `wal-*.tmp` files are deleted;
    /// - every record of every segment is checked;
    /// - a record cut short at the very end of the last segment, with nothing valid after it, is
    ///   truncated away (reported in `recoveryReport`);
    /// - anything else wrong throws `StoreError.corruptLog` and nothing is changed.
    ///
    /// - Parameters:
    ///   - snapshotSequence: the `lastSequence` of the snapshot the caller loaded (0 without one).
    ///     Records up to it may be missing from the log; if the log ends before it (it was not
    ///     synced when the snapshot was taken), the log continues at `snapshotSequence + 1`.
    ///   - segmentSizeLimit: size after which appends start a new segment.
    public init(
        directory: String,
        syncPolicy: SyncPolicy,
        snapshotSequence: UInt64 = 0,
        segmentSizeLimit: Int = WriteAheadLog.defaultSegmentSizeLimit
    ) throws {
        var report = RecoveryReport()
        report.createdDirectory = try FileIO.makeDirectories(directory)
        let lockFD = try Self.lock(directory)
        let opened: Recovered
        do {
            opened = try Self.recover(directory: directory, snapshotSequence: snapshotSequence, report: &report)
        } catch {
            Self.unlock(lockFD)
            throw error
        }
        self.directory = directory
        self.syncPolicy = syncPolicy
        self.segmentSizeLimit = segmentSizeLimit
        self.lockFD = lockFD
        self.closedSegments = opened.closed
        self.active = opened.active
        self.activeFD = opened.activeFD
        self.lastSequence = opened.active.lastSequence
        self.durableSequence = opened.active.lastSequence
        self.recoveryReport = report
        self.lastSyncTime = MonotonicMilliseconds.now()
    }

    deinit {
        if condition != .closed {
            FileIO.close(activeFD)
            Self.unlock(lockFD)
        }
    }

    // MARK: Writing

    /// Appends `payloads` as consecutive records in one write and returns their sequences.
    /// Not durable until `durableSequence` covers them (see `sync()`, `syncIfDue(now:)`).
    ///
    /// Throws `recordTooLarge` (nothing written) or the write's `StoreError.system` (nothing
    /// left behind; the log stays usable). `payloads` must not be empty.
    @discardableResult
    public func append(_ payloads: [[UInt8]]) throws -> ClosedRange<UInt64> {
        precondition(!payloads.isEmpty, "append needs at least one record")
        try ensureWritable()
        var total = 0
        for payload in payloads {
            guard payload.count <= LogFormat.maximumRecordPayload else {
                throw StoreError.recordTooLarge(size: payload.count, limit: LogFormat.maximumRecordPayload)
            }
            total += LogFormat.recordHeaderSize + payload.count
        }
        let first = lastSequence + 1
        if rotation != nil {
            encode(payloads, firstSequence: first, byteCount: total)
            held.append(contentsOf: batch)
            lastSequence = first + UInt64(payloads.count) - 1
            return first...lastSequence
        }
        if !rotatesOnAnotherThread, active.recordCount > 0 && active.byteCount + total > segmentSizeLimit {
            try rotate()
        }
        encode(payloads, firstSequence: first, byteCount: total)
        defer { if batch.capacity > Self.retainedBatchCapacity { batch = [] } }
        let path = pathIn(directory, active.name)
        do {
            try batch.withUnsafeBytes { try FileIO.write(activeFD, $0, at: active.byteCount, path: path) }
        } catch {
            // Part of the batch may be in the file; take it out so the file ends on a whole record.
            do { try FileIO.truncate(activeFD, to: active.byteCount, path: path) } catch { tailNeedsTruncation = true }
            throw error
        }
        let last = first + UInt64(payloads.count) - 1
        active.byteCount += total
        active.lastSequence = last
        lastSequence = last
        return first...last
    }

    /// Convenience for one record.
    @discardableResult
    public func append(_ payload: [UInt8]) throws -> UInt64 {
        try append([payload]).lowerBound
    }

    /// fdatasync: makes every appended record durable. Does nothing when they already are.
    /// A failure leaves the log refusing writes (see the type's documentation).
    public func sync() throws {
        try ensureWritable()
        guard durableSequence < lastSequence else { return }
        try syncActiveSegment()
    }

    /// Syncs when `syncPolicy` says it is time: `.always` whenever something is not yet durable,
    /// `.everySecond` when that is so and the last sync is at least a second old, `.never` not at
    /// all. Call it after each append and also on a periodic tick, so that under `.everySecond`
    /// the last records of a burst do not wait for the next append. Returns whether it synced.
    ///
    /// - Parameter now: milliseconds on CLOCK_MONOTONIC (HuddleIO's `MonotonicClock.milliseconds()`);
    ///   nil reads the clock.
    @discardableResult
    public func syncIfDue(now: Int64? = nil) throws -> Bool {
        let now = now ?? MonotonicMilliseconds.now()
        guard durableSequence < lastSequence else { return false }
        switch syncPolicy {
        case .always:
            break
        case .everySecond:
            guard now - lastSyncTime >= Self.everySecondInterval else { return false }
        case .never:
            return false
        }
        try ensureWritable()
        try syncActiveSegment(now: now)
        return true
    }

    /// Starts a sync of everything appended so far that another thread performs
    /// (`LogSync.perform`) while this one goes on appending; nil when every record is already
    /// durable. Hand the outcome back with `finishSync`. Several may be outstanding; each makes
    /// durable what was appended before it began.
    /// While a rotation runs, only what is in the segment it closes (which it syncs itself).
    public func beginSync() throws -> LogSync? {
        try ensureWritable()
        guard durableSequence < active.lastSequence else { return nil }
        let path = pathIn(directory, active.name)
        let fd = dup(activeFD)
        guard fd >= 0 else { throw StoreError.system(call: "dup", path: path, errno: errno) }
        return LogSync(sequence: active.lastSequence, fd: fd, path: path)
    }

    /// Takes a `LogSync`'s outcome back on the log's thread: success makes its records durable;
    /// failure makes the log refuse writes, exactly as a failed `sync()` does, and rethrows.
    public func finishSync(_ sync: LogSync, _ outcome: Result<Void, StoreError>) throws {
        switch outcome {
        case .success:
            if sync.sequence > durableSequence {
                durableSequence = sync.sequence
                lastSyncTime = MonotonicMilliseconds.now()
            }
        case .failure(let error):
            if condition == .writable {
                condition = .failed("\(error); records after \(durableSequence) may or may not be on disk, reopen the log")
            }
            throw error
        }
    }

    /// Whether the current segment has reached `segmentSizeLimit` (see `rotatesOnAnotherThread`).
    public var segmentIsFull: Bool { active.byteCount >= segmentSizeLimit }

    /// Whether a rotation begun with `beginRotation` has not been finished yet.
    public var isRotating: Bool { rotation != nil }

    /// `rotate()` without waiting for the disk: closes the current segment to appends and returns
    /// the job that syncs it and creates the next one on another thread (`LogRotation.perform`);
    /// hand it back with `finishRotation`. Until then, appends are held in memory (not durable,
    /// not readable). Nil when the current segment holds no record or a rotation already runs.
    public func beginRotation() throws -> LogRotation? {
        try ensureWritable()
        guard rotation == nil, active.recordCount > 0 else { return nil }
        let path = pathIn(directory, active.name)
        let fd = dup(activeFD)
        guard fd >= 0 else { throw StoreError.system(call: "dup", path: path, errno: errno) }
        let started = LogRotation(sequence: active.lastSequence, fd: fd, path: path, directory: directory)
        rotation = started
        return started
    }

    /// Takes a performed `LogRotation` back on the log's thread: the closed segment is durable,
    /// appends go to the new one, starting with the records held meanwhile (not yet durable:
    /// sync them as any append). A failed sync makes the log refuse writes, as a failed `sync()`
    /// does, and so does a failed write of the held records (their owner already applied them),
    /// and both rethrow. If only the new segment could not be created, the held records go to
    /// the current segment and the error is returned: the log stays usable.
    @discardableResult
    public func finishRotation(_ finished: LogRotation) throws -> StoreError? {
        guard rotation === finished, let outcome = finished.outcome else { return nil }
        rotation = nil
        let records = held
        held = []
        if case .failure(let error) = outcome.synced {
            condition = .failed("\(error); records after \(durableSequence) may or may not be on disk, reopen the log")
            throw error
        }
        if finished.sequence > durableSequence {
            durableSequence = finished.sequence
            lastSyncTime = MonotonicMilliseconds.now()
        }
        var creationError: StoreError?
        switch outcome.created {
        case .success(let segment)?:
            FileIO.close(activeFD)
            closedSegments.append(active)
            active = segment.info
            activeFD = segment.fd
        case .failure(let error)?:
            creationError = error
        case nil:
            preconditionFailure("a rotation whose sync succeeded always tries the new segment")
        }
        guard !records.isEmpty else { return creationError }
        let path = pathIn(directory, active.name)
        do {
            try records.withUnsafeBytes { try FileIO.write(activeFD, $0, at: active.byteCount, path: path) }
        } catch {
            condition = .failed("\(error): records \(active.lastSequence + 1)...\(lastSequence) could not be written, reopen the log")
            throw error
        }
        active.byteCount += records.count
        active.lastSequence = lastSequence
        return creationError
    }

    /// Closes the current segment and starts `wal-<lastSequence + 1>.log`, so that everything up
    /// to now can later be removed as a whole with `removeSegments(upTo:)`. Call it when taking
    /// the state copy for a snapshot. Does nothing if the current segment holds no record yet.
    ///
    /// The closed segment is synced first whatever the policy: recovery relies on damage in any
    /// segment but the last never being an interrupted write.
    public func rotate() throws {
        try ensureWritable()
        precondition(rotation == nil, "finish the rotation running on another thread first")
        guard active.recordCount > 0 else { return }
        if durableSequence < lastSequence { try syncActiveSegment() }
        let (fd, segment) = try Self.createSegment(directory: directory, firstSequence: lastSequence + 1)
        FileIO.close(activeFD)
        closedSegments.append(active)
        active = segment
        activeFD = fd
    }

    /// Deletes, oldest first, the closed segments whose every record is ≤ `sequence` (pass the
    /// sequence a retained snapshot covers; see `SnapshotWriteResult.olderSnapshotSequence`).
    /// The current segment is never deleted. Oldest first, so an interruption leaves the log
    /// contiguous. Returns the names deleted.
    @discardableResult
    public func removeSegments(upTo sequence: UInt64) throws -> [String] {
        guard condition != .closed else { throw StoreError.logUnusable(reason: "the log is closed") }
        var removed: [String] = []
        defer { closedSegments.removeFirst(removed.count) }
        while removed.count < closedSegments.count, closedSegments[removed.count].lastSequence <= sequence {
            let name = closedSegments[removed.count].name
            try FileIO.unlink(pathIn(directory, name))
            removed.append(name)
        }
        if !removed.isEmpty { try FileIO.syncDirectory(directory) }
        return removed
    }

    /// Syncs what is not yet durable and releases the files and the directory lock. Further
    /// writes throw; calling it again does nothing.
    public func close() throws {
        guard condition != .closed else { return }
        defer {
            FileIO.close(activeFD)
            Self.unlock(lockFD)
            condition = .closed
        }
        if condition == .writable {
            try ensureWritable()
            if durableSequence < lastSequence { try syncActiveSegment() }
        }
    }

    // MARK: Reading

    /// The records after `sequence`, streamed from disk in order (see `LogRecordReader`).
    /// Throws `recordsUnavailable` if records just after `sequence` were already removed.
    public func records(after sequence: UInt64) throws -> LogRecordReader {
        guard condition != .closed else { throw StoreError.logUnusable(reason: "the log is closed") }
        let all = segments
        if sequence < lastSequence, let oldest = all.first, sequence + 1 < oldest.firstSequence {
            throw StoreError.recordsUnavailable(requestedAfter: sequence, firstAvailable: oldest.firstSequence)
        }
        let sources = all.filter { $0.lastSequence > sequence }.map {
            LogRecordReader.Source(name: $0.name, firstSequence: $0.firstSequence, end: $0.byteCount)
        }
        return try LogRecordReader(directory: directory, sources: sources, after: sequence)
    }

    /// The segment files, oldest first; the last is the one being appended to.
    public var segments: [LogSegmentInfo] { closedSegments + [active] }

    /// Bytes in all segment files.
    public var byteCount: Int { closedSegments.reduce(active.byteCount) { $0 + $1.byteCount } }

    /// Records in all segment files (including those a snapshot already covers).
    public var recordCount: Int { closedSegments.reduce(active.recordCount) { $0 + $1.recordCount } }

    /// Why writes are refused, or nil while the log is writable.
    public var failureReason: String? {
        switch condition {
        case .writable: return nil
        case .failed(let reason): return reason
        case .closed: return "the log is closed"
        }
    }

    // MARK: Internals

    private func ensureWritable() throws {
        switch condition {
        case .writable: break
        case .failed(let reason): throw StoreError.logUnusable(reason: reason)
        case .closed: throw StoreError.logUnusable(reason: "the log is closed")
        }
        if tailNeedsTruncation {
            try FileIO.truncate(activeFD, to: active.byteCount, path: pathIn(directory, active.name))
            tailNeedsTruncation = false
        }
    }

    private func syncActiveSegment(now: Int64 = MonotonicMilliseconds.now()) throws {
        do {
            try FileIO.syncData(activeFD, path: pathIn(directory, active.name))
        } catch {
            condition = .failed("\(error); records after \(durableSequence) may or may not be on disk, reopen the log")
            throw error
        }
        durableSequence = active.lastSequence
        lastSyncTime = now
    }

    private func encode(_ payloads: [[UInt8]], firstSequence: UInt64, byteCount: Int) {
        batch.removeAll(keepingCapacity: true)
        batch.reserveCapacity(byteCount)
        var sequence = firstSequence
        for payload in payloads {
            let crc = payload.withUnsafeBytes { LogFormat.recordChecksum(sequence: sequence, payload: $0) }
            batch.appendLittleEndian(UInt32(payload.count))
            batch.appendLittleEndian(crc)
            batch.appendLittleEndian(sequence)
            batch.append(contentsOf: payload)
            sequence += 1
        }
    }

    private static func lock(_ directory: String) throws -> Int32 {
        let path = pathIn(directory, DataDirectoryListing.lockFileName)
        let fd = try FileIO.open(path, O_RDWR | O_CREAT)
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            FileIO.close(fd)
            if code == EWOULDBLOCK { throw StoreError.directoryLocked(path: directory) }
            throw StoreError.system(call: "flock", path: path, errno: code)
        }
        return fd
    }

    /// Releases the directory with an explicit LOCK_UN before the close. A flock belongs to the
    /// open file description, and a child forked by any thread of this process (a server
    /// starting a program, a test process starting servers) holds a copy of it until its exec
    /// or exit: a bare close would leave the directory locked for that long, and a reopen in
    /// between would be refused as "in use by another open log".
    private static func unlock(_ lockFD: Int32) {
        _ = flock(lockFD, LOCK_UN)
        FileIO.close(lockFD)
    }

    /// Creates a segment that is complete from the moment its name exists: header written and
    /// synced under `.tmp`, then renamed, then the directory synced. Returns it open for writing.
    static func createSegment(directory: String, firstSequence: UInt64) throws -> (Int32, LogSegmentInfo) {
        let name = DataDirectoryListing.segmentName(firstSequence: firstSequence)
        let path = pathIn(directory, name)
        let temporaryPath = path + DataDirectoryListing.temporarySuffix
        let fd = try FileIO.open(temporaryPath, O_RDWR | O_CREAT | O_TRUNC)
        do {
            let header = LogFormat.segmentHeader(firstSequence: firstSequence)
            try header.withUnsafeBytes { try FileIO.write(fd, $0, at: 0, path: temporaryPath) }
            try FileIO.syncData(fd, path: temporaryPath)
            try FileIO.rename(temporaryPath, path)
        } catch {
            FileIO.close(fd)
            _ = Glibc.unlink(temporaryPath)
            throw error
        }
        do {
            try FileIO.syncDirectory(directory)
        } catch {
            // Left in place, the empty segment would claim sequences the current one goes on to use.
            FileIO.close(fd)
            _ = Glibc.unlink(path)
            throw error
        }
        let segment = LogSegmentInfo(
            name: name, firstSequence: firstSequence, lastSequence: firstSequence - 1,
            byteCount: LogFormat.segmentHeaderSize)
        return (fd, segment)
    }

    private struct Recovered {
        var closed: [LogSegmentInfo]
        var active: LogSegmentInfo
        var activeFD: Int32
    }

    private static func recover(directory: String, snapshotSequence: UInt64, report: inout RecoveryReport) throws -> Recovered {
        let listing = try DataDirectoryListing(directory: directory)
        let staleTemporaries = listing.temporaryFiles.filter { $0.hasPrefix(DataDirectoryListing.segmentPrefix) }
        for name in staleTemporaries { try FileIO.unlink(pathIn(directory, name)) }
        if !staleTemporaries.isEmpty { try FileIO.syncDirectory(directory) }
        report.removedTemporaryFiles = staleTemporaries

        // Every segment is scanned read-only except the last, which stays open for appending.
        var summaries: [SegmentSummary] = []
        var lastFD: Int32 = -1
        do {
            for (index, entry) in listing.segments.enumerated() {
                if index == listing.segments.count - 1 {
                    lastFD = try FileIO.open(pathIn(directory, entry.name), O_RDWR)
                    summaries.append(try SegmentSummary.scan(fd: lastFD, directory: directory, name: entry.name, firstSequence: entry.firstSequence))
                } else {
                    summaries.append(try SegmentSummary.scan(directory: directory, name: entry.name, firstSequence: entry.firstSequence))
                }
            }
            let assessment = LogAssessment(segments: summaries, snapshotSequence: snapshotSequence)
            if let fatal = assessment.fatal.first { throw fatal }
            if let (index, damage) = assessment.tornTail {
                let segment = summaries[index]
                let path = pathIn(directory, segment.name)
                try FileIO.truncate(lastFD, to: damage.offset, path: path)
                try FileIO.syncData(lastFD, path: path)
                report.truncatedTail = .init(
                    file: segment.name, offset: damage.offset, bytesRemoved: segment.fileSize - damage.offset,
                    reason: damage.reason)
                summaries[index].fileSize = damage.offset
            }
        } catch {
            if lastFD >= 0 { FileIO.close(lastFD) }
            throw error
        }

        var segments = summaries.map {
            LogSegmentInfo(name: $0.name, firstSequence: $0.firstSequence, lastSequence: $0.lastSequence, byteCount: $0.validEnd)
        }
        var activeFD = lastFD
        if activeFD >= 0 {
            // What a killed process left in the page cache is on the disk only after this; and a
            // segment must be durable before any later one exists (see LogAssessment).
            do {
                try FileIO.syncData(activeFD, path: pathIn(directory, segments[segments.count - 1].name))
            } catch {
                FileIO.close(activeFD)
                throw error
            }
        }
        let logEnd = segments.last?.lastSequence ?? 0
        if segments.isEmpty || logEnd < snapshotSequence {
            if let last = segments.last, last.recordCount == 0 {
                // An empty segment behind the snapshot marks a place the log no longer continues from.
                FileIO.close(activeFD)
                activeFD = -1
                try FileIO.unlink(pathIn(directory, last.name))
                segments.removeLast()
            }
            if logEnd < snapshotSequence { report.coveredOnlyBySnapshot = (logEnd + 1)...snapshotSequence }
            let (fd, segment) = try createSegment(directory: directory, firstSequence: snapshotSequence + 1)
            if activeFD >= 0 { FileIO.close(activeFD) }
            activeFD = fd
            segments.append(segment)
        }

        let active = segments.removeLast()
        report.segmentCount = segments.count + 1
        report.recordCount = segments.reduce(active.recordCount) { $0 + $1.recordCount }
        report.lastSequence = active.lastSequence
        report.firstSequence = (segments + [active]).first { $0.recordCount > 0 }?.firstSequence
        return Recovered(closed: segments, active: active, activeFD: activeFD)
    }
}

@available(*, unavailable, message: "a WriteAheadLog belongs to one thread")
extension WriteAheadLog: Sendable {}
