import Glibc
import Synchronization

/// Snapshots of the state: opaque payloads, compressed and checksummed, each in its own file
/// `snapshot-<last sequence>.snap`, so a new one never overwrites the only good copy.
///
/// Writing follows Redis's rdb.c: a temporary file, fsync, rename over the final name, fsync of
/// the directory — a crash leaves either the old set of snapshots or the new one, never a half file
/// under a real name. Retention keeps the new snapshot and the newest one below it (the fallback
/// if the new one turns out damaged) and deletes the older ones; a damaged snapshot is never that
/// fallback. Snapshots newer than the one
/// written are left alone: they can only be damaged ones passed over at start-up, and are kept
/// for the operator to look at.
///
/// Thread-safe: meant to be written from a background thread while the log appends on another.
/// It shares no state with `WriteAheadLog`; concurrent writes through one store are serialized.
/// Use one store per data directory, opened after the log (which holds the directory lock).
public final class SnapshotStore: Sendable {
    public let directory: String
    private let writing = Mutex(())
    /// What this store has seen of each snapshot, by sequence: written or loaded (good), or
    /// passed over as damaged. Retention uses it to choose the fallback without inflating it.
    private let verdicts = Mutex(SnapshotVerdicts())

    /// How much of a snapshot may be written before it is put on the disk (see `write`).
    static let writeBackBytes = 2 << 20

    public init(directory: String) {
        self.directory = directory
    }

    /// Writes `payload` as the snapshot of the state after record `lastSequence`. Returns once
    /// the file and its name are durable. Creates the directory if needed.
    ///
    /// `continuing` is asked between compressed chunks and before the rename: once it says no,
    /// the temporary file is removed and `snapshotAbandoned` thrown, leaving the directory as it
    /// was (a snapshot only shortens the next start's replay; the log holds everything).
    @discardableResult
    public func write(
        payload: [UInt8], lastSequence: UInt64, continuing: () -> Bool = { true }
    ) throws -> SnapshotWriteResult {
        try writing.withLock { _ in try writeSerialized(payload: payload, lastSequence: lastSequence, continuing: continuing) }
    }

    /// Removes every snapshot below `lastSequence`, the fallback too: after a deletion, no file
    /// may keep what was deleted once a snapshot without it is written (the log before that
    /// snapshot goes with them, so there is nothing to fall back to until the next one).
    @discardableResult
    public func removeSnapshots(below lastSequence: UInt64) throws -> [String] {
        try writing.withLock { _ in
            var removed: [String] = []
            for entry in try DataDirectoryListing(directory: directory).snapshots where entry.lastSequence < lastSequence {
                try FileIO.unlink(pathIn(directory, entry.name))
                removed.append(entry.name)
            }
            if !removed.isEmpty { try FileIO.syncDirectory(directory) }
            return removed
        }
    }

    /// Removes the temporary file of an unfinished write of snapshot `lastSequence`, from
    /// another thread than the writer's: the shutdown's, which will not wait for the writer.
    /// The writer, if it is still running, sees its `continuing` say no and stops.
    public func removeUnfinished(lastSequence: UInt64) {
        let path = pathIn(directory, DataDirectoryListing.snapshotName(lastSequence: lastSequence))
        _ = Glibc.unlink(path + DataDirectoryListing.temporarySuffix)
    }

    /// The newest snapshot that passes every check, falling back to older ones (listed in
    /// `skipped`). Nil if the directory holds no snapshot; throws `noValidSnapshot` if it holds
    /// some but none is valid — starting empty then would silently lose their state.
    /// `atOrBelow`: snapshots above that `lastSequence` are left out, as if absent.
    public func loadNewestValid(atOrBelow bound: UInt64 = .max) throws -> LoadedSnapshot? {
        let listing: DataDirectoryListing
        do {
            listing = try DataDirectoryListing(directory: directory)
        } catch let error as StoreError where error.errno == ENOENT {
            return nil
        }
        var skipped: [String] = []
        for entry in listing.snapshots.reversed() where entry.lastSequence <= bound {
            do {
                let payload = try SnapshotFile.payload(directory: directory, name: entry.name, lastSequence: entry.lastSequence)
                verdicts.withLock { $0.record(entry.lastSequence, valid: true) }
                return LoadedSnapshot(payload: payload, lastSequence: entry.lastSequence, file: entry.name, skipped: skipped)
            } catch {
                verdicts.withLock { $0.record(entry.lastSequence, valid: false) }
                skipped.append("\(entry.name): \(error)")
            }
        }
        if skipped.isEmpty { return nil }
        throw StoreError.noValidSnapshot(reasons: skipped)
    }

    private func writeSerialized(payload: [UInt8], lastSequence: UInt64, continuing: () -> Bool) throws -> SnapshotWriteResult {
        guard continuing() else { throw StoreError.snapshotAbandoned }
        try FileIO.makeDirectories(directory)
        let listing = try DataDirectoryListing(directory: directory)
        // Left by a write the process did not live to finish.
        for name in listing.temporaryFiles where name.hasPrefix(DataDirectoryListing.snapshotPrefix) {
            try FileIO.unlink(pathIn(directory, name))
        }

        let name = DataDirectoryListing.snapshotName(lastSequence: lastSequence)
        let path = pathIn(directory, name)
        let temporaryPath = path + DataDirectoryListing.temporarySuffix
        let fd = try FileIO.open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC)
        let byteCount: Int
        do {
            // The header goes in last, once the compressed length is known; zeros until then
            // fail its CRC if the process stops in between.
            var offset = SnapshotFormat.headerSize
            let zeros = [UInt8](repeating: 0, count: offset)
            try zeros.withUnsafeBytes { try FileIO.write(fd, $0, at: 0, path: temporaryPath) }
            // Paced writeback: each `writeBackBytes` written is put on the disk before more is
            // written, so the final fsync has little left and the log's fdatasync, which the
            // file system may make wait for every dirty page it has to commit with it, never
            // queues behind the whole snapshot (publish p99 went to 0.4–1 s without it).
            var writtenBack = 0
            let compressedLength = try payload.withUnsafeBytes { bytes in
                try SnapshotCompression.deflate(bytes) { chunk in
                    guard continuing() else { throw StoreError.snapshotAbandoned }
                    try FileIO.write(fd, chunk, at: offset, path: temporaryPath)
                    offset += chunk.count
                    if offset - writtenBack >= Self.writeBackBytes {
                        try FileIO.writeBack(fd, offset: writtenBack, count: offset - writtenBack, path: temporaryPath)
                        writtenBack = offset
                    }
                }
            }
            let header = SnapshotFormat.encode(.init(
                lastSequence: lastSequence,
                uncompressedLength: UInt64(payload.count),
                compressedLength: UInt64(compressedLength),
                payloadCRC: payload.withUnsafeBytes { CRC32.checksum($0) }))
            try header.withUnsafeBytes { try FileIO.write(fd, $0, at: 0, path: temporaryPath) }
            try FileIO.syncAll(fd, path: temporaryPath)
            FileIO.close(fd)
            byteCount = offset
        } catch {
            FileIO.close(fd)
            _ = Glibc.unlink(temporaryPath)
            throw error
        }
        do {
            guard continuing() else { throw StoreError.snapshotAbandoned }
            try FileIO.rename(temporaryPath, path)
        } catch {
            _ = Glibc.unlink(temporaryPath)
            throw error
        }
        try FileIO.syncDirectory(directory)
        verdicts.withLock { $0.record(lastSequence, valid: true) }

        // The fallback is the newest snapshot below the new one that passes its checks. Damaged
        // ones above it stay for the operator (start-up passes over them); everything below it
        // goes. A damaged snapshot is never the fallback: then the log behind the good one would
        // be dropped, and damage to the new snapshot would leave nothing to start from.
        var fallback: UInt64?
        var removed: [String] = []
        for entry in listing.snapshots.reversed() where entry.lastSequence < lastSequence {
            if fallback != nil {
                try FileIO.unlink(pathIn(directory, entry.name))
                removed.append(entry.name)
            } else if isValid(entry.name, lastSequence: entry.lastSequence) {
                fallback = entry.lastSequence
            }
        }
        if !removed.isEmpty { try FileIO.syncDirectory(directory) }
        return SnapshotWriteResult(
            file: name, byteCount: byteCount, removedFiles: removed,
            olderSnapshotSequence: fallback ?? 0)
    }

    /// Whether a snapshot passes every check. One this store wrote or loaded is taken as good
    /// (checking means inflating it whole); any other is checked once and the verdict kept.
    private func isValid(_ name: String, lastSequence: UInt64) -> Bool {
        if let known = verdicts.withLock({ $0.verdict(lastSequence) }) { return known }
        let valid = (try? SnapshotFile.payload(directory: directory, name: name, lastSequence: lastSequence)) != nil
        verdicts.withLock { $0.record(lastSequence, valid: valid) }
        return valid
    }
}
