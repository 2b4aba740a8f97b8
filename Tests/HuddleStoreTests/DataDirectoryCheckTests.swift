import Foundation
import HuddleStore
import Testing

@Suite struct DataDirectoryCheckTests {
    /// Snapshots at 3 and 6, segments wal-1 (1...3), wal-4 (4...6), wal-7 (7...8).
    private func populated() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        let store = SnapshotStore(directory: directory.path)
        try appendRecords(log, 1...3)
        try log.rotate()
        try store.write(payload: payload(3, size: 1000), lastSequence: 3)
        try appendRecords(log, 4...6)
        try log.rotate()
        try store.write(payload: payload(6, size: 2000), lastSequence: 6)
        try appendRecords(log, 7...8)
        try log.close()
        return directory
    }

    @Test func aSoundDirectoryVerifies() throws {
        let directory = try populated()
        let report = DataDirectoryCheck.verify(directory: directory.path)
        #expect(report.isSound, "\(report)")
        #expect(report.problems == [])
        #expect(report.notices == [])
        #expect(report.newestValidSnapshot == 6)
        #expect(report.snapshots.map(\.file) == [snapshotName(3), snapshotName(6)])
        #expect(report.segments.map(\.recordCount) == [3, 3, 2])
        #expect(report.segments.map(\.lastSequence) == [3, 6, 8])
    }

    @Test func inspectListsEveryFile() throws {
        let directory = try populated()
        let report = DataDirectoryCheck.inspect(directory: directory.path)
        #expect(report.problems == [])
        #expect(report.segments.map(\.name) == [segmentName(1), segmentName(4), segmentName(7)])
        #expect(report.segments.map(\.recordCount) == [3, 3, 2])
        #expect(report.segments.map(\.firstRecord) == [1, 4, 7])
        #expect(report.segments.map(\.lastRecord) == [3, 6, 8])
        #expect(report.segments.map(\.byteCount) == report.segments.map { directory.size($0.name) })
        #expect(report.segments.allSatisfy { $0.note == nil })
        #expect(report.recordCount == 8)
        #expect(report.snapshots.map(\.lastSequence) == [3, 6])
        #expect(report.snapshots.map(\.payloadByteCount) == [1000, 2000])
        #expect(report.snapshots.map(\.byteCount) == report.snapshots.map { directory.size($0.name) })
        let now = Int64(Date().timeIntervalSince1970)
        for modified in report.segments.map(\.modified) + report.snapshots.map(\.modified) {
            #expect(abs(modified - now) < 600)
        }
        #expect(report.otherFiles.map(\.name) == ["wal.lock"])
        #expect(report.description.contains("\(segmentName(7))  \(directory.size(segmentName(7))) bytes, 2 record(s) 7...8"))
    }

    @Test func aTornTailIsANoticeAndIsLeftInPlace() throws {
        let directory = try populated()
        let size = directory.size(segmentName(7))
        directory.truncate(segmentName(7), to: size - 3)
        let before = directory.fingerprint()
        let report = DataDirectoryCheck.verify(directory: directory.path)
        #expect(report.isSound)
        #expect(report.notices.count == 1)
        #expect(report.notices.first?.hasPrefix("\(segmentName(7)): the last ") == true)
        let inspected = DataDirectoryCheck.inspect(directory: directory.path)
        #expect(inspected.segments.last?.recordCount == 1)
        #expect(inspected.segments.last?.note?.contains("incomplete record") == true)
        #expect(directory.fingerprint() == before)
    }

    @Test func damageIsReportedAndNothingIsChanged() throws {
        let directory = try populated()
        directory.flipBit(segmentName(4), atByte: 24 + 18)  // inside record 4
        directory.flipBit(snapshotName(6), atByte: 60)
        directory.write(snapshotName(9) + ".tmp", [0])
        let before = directory.fingerprint()

        let report = DataDirectoryCheck.verify(directory: directory.path)
        #expect(report.outcome == .refused)
        #expect(report.newestValidSnapshot == 3)
        #expect(report.snapshots.map { $0.problem != nil } == [false, true])
        #expect(report.segments.map { $0.problem != nil } == [false, true, false])
        #expect(report.problems.count == 1)
        #expect(report.passedOver.count == 1)
        #expect(report.passedOver.first?.hasPrefix("\(snapshotName(6)): ") == true)
        #expect(report.problems.contains { $0.hasPrefix("corrupt log \(segmentName(4)) at offset 24: record checksum mismatch") })
        #expect(report.notices == ["\(snapshotName(9)).tmp: left by an interrupted write; removed by the next open or snapshot"])

        let inspected = DataDirectoryCheck.inspect(directory: directory.path)
        #expect(inspected.segments.map(\.recordCount) == [3, 0, 2])
        #expect(inspected.segments[1].note == "damaged at offset 24: record checksum mismatch")
        #expect(inspected.otherFiles.map(\.name) == [snapshotName(9) + ".tmp", "wal.lock"])
        #expect(directory.fingerprint() == before)
    }

    /// Issue 12: verify failed a directory that start-up recovers completely (a damaged newest
    /// snapshot, an older valid one and the whole log after it).
    @Test func aDamagedNewestSnapshotWithItsFallbackIsRecoverableNotRefused() throws {
        let directory = try populated()
        directory.flipBit(snapshotName(6), atByte: 60)
        let report = DataDirectoryCheck.verify(directory: directory.path)
        #expect(report.outcome == .startsFromOlderSnapshot, "\(report)")
        #expect(report.problems == [])
        #expect(report.newestValidSnapshot == 3)
        #expect(report.passedOver.count == 1)
        #expect(report.passedOver.first?.hasSuffix("start-up passes over it and loads \(snapshotName(3))") == true)
        #expect(report.description.hasPrefix("\(directory.path): recoverable: "))

        // The older one damaged instead: start-up never reads it, so it is only a notice.
        let other = try populated()
        other.flipBit(snapshotName(3), atByte: 60)
        let olderDamaged = DataDirectoryCheck.verify(directory: other.path)
        #expect(olderDamaged.outcome == .sound, "\(olderDamaged)")
        #expect(olderDamaged.notices.contains { $0.hasPrefix("\(snapshotName(3)): ") })

        // Both damaged: start-up refuses (it will not start without their state).
        directory.flipBit(snapshotName(3), atByte: 60)
        let bothDamaged = DataDirectoryCheck.verify(directory: directory.path)
        #expect(bothDamaged.outcome == .refused)
        #expect(bothDamaged.problems.contains { $0.hasPrefix("no snapshot is valid") })
    }

    @Test func continuityIsCheckedFromTheNewestValidSnapshot() throws {
        let directory = try populated()
        directory.remove(segmentName(1))  // covered by both snapshots: fine
        #expect(DataDirectoryCheck.verify(directory: directory.path).isSound)
        directory.remove(segmentName(4))  // covered by the snapshot at 6 only
        #expect(DataDirectoryCheck.verify(directory: directory.path).isSound)
        directory.flipBit(snapshotName(6), atByte: 0)  // now the fallback at 3 must be followed by 4...
        let report = DataDirectoryCheck.verify(directory: directory.path)
        #expect(!report.isSound)
        #expect(report.newestValidSnapshot == 3)
        #expect(report.problems.contains {
            $0.contains("the log starts at sequence 7 but the snapshot covers only up to 3: records 4...6 are missing")
        })
    }

    @Test func aMissingOrEmptyDirectory() throws {
        let directory = TemporaryDirectory()
        let empty = DataDirectoryCheck.verify(directory: directory.path)
        #expect(empty.isSound)
        #expect(empty.notices == ["no snapshots and no log: an empty data directory"])
        let missing = DataDirectoryCheck.verify(directory: directory.file("missing"))
        #expect(!missing.isSound)
        #expect(DataDirectoryCheck.inspect(directory: directory.file("missing")).problems.count == 1)
        #expect(!FileManager.default.fileExists(atPath: directory.file("missing")))
    }
}
