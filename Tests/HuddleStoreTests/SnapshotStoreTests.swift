import Foundation
import HuddleStore
import Testing

@Suite struct SnapshotStoreTests {
    @Test func aSnapshotRoundTripsAndIsSmallerThanItsPayload() throws {
        let directory = TemporaryDirectory()
        let store = SnapshotStore(directory: directory.path + "/created/on/write")
        // Over 256 KiB compressed, so the output leaves zlib in several chunks.
        let state = Array(repeating: Array("{\"user\":\"alice\",\"room\":\"alice+bob\"}".utf8), count: 40_000).flatMap { $0 }
            + incompressibleBytes(400 << 10)
        let written = try store.write(payload: state, lastSequence: 42)
        #expect(written.file == snapshotName(42))
        #expect(written.byteCount < state.count)
        #expect(written.removedFiles == [])
        #expect(written.olderSnapshotSequence == 0)
        let loaded = try #require(try store.loadNewestValid())
        let roundTripped = loaded.payload == state  // a Bool: a failure must not print megabytes
        #expect(roundTripped)
        #expect(loaded.lastSequence == 42)
        #expect(loaded.file == snapshotName(42))
        #expect(loaded.skipped == [])
    }

    @Test func theHeaderHasTheSpecifiedBytes() throws {
        let directory = TemporaryDirectory()
        let state = Array("state".utf8)
        try SnapshotStore(directory: directory.path).write(payload: state, lastSequence: 0x0102)
        let file = directory.bytes(snapshotName(0x0102))
        let compressedLength = file.count - 48
        let head = Array("HUDDLSNP".utf8) + littleEndianBytes(UInt32(1)) + littleEndianBytes(UInt32(1))
            + littleEndianBytes(UInt64(0x0102)) + littleEndianBytes(UInt64(state.count))
            + littleEndianBytes(UInt64(compressedLength)) + littleEndianBytes(referenceCRC32(state))
        #expect(Array(file[0..<48]) == head + littleEndianBytes(referenceCRC32(head)))
        #expect(file[48] == 0x78)  // a zlib stream (RFC 1950: CMF of deflate with a 32 KiB window)
    }

    @Test func anEmptyPayloadRoundTrips() throws {
        let directory = TemporaryDirectory()
        let store = SnapshotStore(directory: directory.path)
        try store.write(payload: [], lastSequence: 0)
        let loaded = try #require(try store.loadNewestValid())
        #expect(loaded.payload == [])
        #expect(loaded.lastSequence == 0)
    }

    @Test func noSnapshotAndNoDirectoryMeanNothingToLoad() throws {
        let directory = TemporaryDirectory()
        #expect(try SnapshotStore(directory: directory.path).loadNewestValid() == nil)
        #expect(try SnapshotStore(directory: directory.path + "/missing").loadNewestValid() == nil)
    }

    @Test func theNewestTwoAreKept() throws {
        let directory = TemporaryDirectory()
        let store = SnapshotStore(directory: directory.path)
        #expect(try store.write(payload: payload(10), lastSequence: 10).olderSnapshotSequence == 0)
        #expect(try store.write(payload: payload(20), lastSequence: 20).olderSnapshotSequence == 10)
        let third = try store.write(payload: payload(30), lastSequence: 30)
        #expect(third.removedFiles == [snapshotName(10)])
        #expect(third.olderSnapshotSequence == 20)
        #expect(directory.names().filter { $0.hasPrefix("snapshot-") } == [snapshotName(20), snapshotName(30)])
        // The same sequence again replaces the file and keeps the fallback.
        let again = try store.write(payload: payload(31), lastSequence: 30)
        #expect(again.removedFiles == [])
        #expect(try store.loadNewestValid()?.payload == payload(31))
    }

    enum Damage: CaseIterable, Sendable {
        case truncated, headerBit, payloadBit, zeroed, empty

        func apply(to file: inout [UInt8]) {
            switch self {
            case .truncated: file.removeLast(3)
            case .headerBit: file[20] ^= 1
            case .payloadBit: file[48 + (file.count - 48) / 2] ^= 0x10
            case .zeroed: file = [UInt8](repeating: 0, count: file.count)
            case .empty: file = []
            }
        }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedNewestSnapshotFallsBackToThePrevious(damage: Damage) throws {
        let directory = TemporaryDirectory()
        let store = SnapshotStore(directory: directory.path)
        try store.write(payload: payload(10, size: 5000), lastSequence: 10)
        try store.write(payload: payload(20, size: 5000), lastSequence: 20)
        var newest = directory.bytes(snapshotName(20))
        damage.apply(to: &newest)
        directory.write(snapshotName(20), newest)

        let loaded = try #require(try store.loadNewestValid())
        #expect(loaded.lastSequence == 10)
        let isPrevious = loaded.payload == payload(10, size: 5000)
        #expect(isPrevious)
        #expect(loaded.skipped.count == 1)
        #expect(loaded.skipped.first?.hasPrefix(snapshotName(20) + ": ") == true)
    }

    /// Issue 12, problem 12: after a start that fell back past a damaged newest snapshot, the
    /// next snapshot kept the damaged one as its fallback and deleted the good one (and the log
    /// after it), so damage to the new snapshot then left nothing to start from.
    @Test func retentionNeverKeepsADamagedFallbackNorDeletesTheLastGoodOne() throws {
        let directory = TemporaryDirectory()
        try SnapshotStore(directory: directory.path).write(payload: payload(10, size: 5000), lastSequence: 10)
        try SnapshotStore(directory: directory.path).write(payload: payload(20, size: 5000), lastSequence: 20)
        directory.flipBit(snapshotName(20), atByte: 60)

        let restarted = SnapshotStore(directory: directory.path)
        #expect(try restarted.loadNewestValid()?.lastSequence == 10)
        let written = try restarted.write(payload: payload(30, size: 5000), lastSequence: 30)
        #expect(written.olderSnapshotSequence == 10)
        #expect(written.removedFiles == [])
        #expect(directory.names().filter { $0.hasPrefix("snapshot-") } == [snapshotName(10), snapshotName(20), snapshotName(30)])

        directory.flipBit(snapshotName(30), atByte: 60)
        #expect(try SnapshotStore(directory: directory.path).loadNewestValid()?.lastSequence == 10)

        // A store that never loaded (so knows nothing of the damage) checks a fallback it did not
        // write itself, and the next good snapshot retires both the damaged ones and the old one.
        let fresh = SnapshotStore(directory: directory.path)
        let next = try fresh.write(payload: payload(40, size: 5000), lastSequence: 40)
        #expect(next.olderSnapshotSequence == 10)
        let last = try fresh.write(payload: payload(50, size: 5000), lastSequence: 50)
        #expect(last.olderSnapshotSequence == 40)
        #expect(last.removedFiles == [snapshotName(30), snapshotName(20), snapshotName(10)])
        #expect(directory.names().filter { $0.hasPrefix("snapshot-") } == [snapshotName(40), snapshotName(50)])
    }

    @Test func aSnapshotUnderAnotherSequenceNameIsRejected() throws {
        let directory = TemporaryDirectory()
        let store = SnapshotStore(directory: directory.path)
        try store.write(payload: payload(10), lastSequence: 10)
        directory.rename(snapshotName(10), snapshotName(99))
        #expect(throws: StoreError.noValidSnapshot(reasons: [
            "\(snapshotName(99)): header says sequence 10, file name says 99"
        ])) {
            try store.loadNewestValid()
        }
    }

    @Test func whenNoSnapshotIsValidLoadingRefuses() throws {
        let directory = TemporaryDirectory()
        let store = SnapshotStore(directory: directory.path)
        try store.write(payload: payload(10), lastSequence: 10)
        try store.write(payload: payload(20), lastSequence: 20)
        directory.flipBit(snapshotName(10), atByte: 0)
        directory.flipBit(snapshotName(20), atByte: 0)
        let error = #expect(throws: StoreError.self) { try store.loadNewestValid() }
        guard case .noValidSnapshot(let reasons) = error else {
            Issue.record("expected noValidSnapshot, got \(String(describing: error))")
            return
        }
        #expect(reasons == [
            "\(snapshotName(20)): not a snapshot (bad magic)", "\(snapshotName(10)): not a snapshot (bad magic)",
        ])
    }

    @Test func aLeftoverTemporaryFileIsIgnoredAndThenRemoved() throws {
        let directory = TemporaryDirectory()
        let store = SnapshotStore(directory: directory.path)
        try store.write(payload: payload(10), lastSequence: 10)
        directory.write(snapshotName(20) + ".tmp", [1, 2, 3])
        #expect(try store.loadNewestValid()?.lastSequence == 10)
        try store.write(payload: payload(30), lastSequence: 30)
        #expect(!directory.names().contains(snapshotName(20) + ".tmp"))
    }

    @Test func aSnapshotIsWrittenOnAnotherThreadWhileTheLogAppends() async throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        let store = SnapshotStore(directory: directory.path)
        try appendRecords(log, 1...100)
        try log.sync()
        try log.rotate()
        let state = incompressibleBytes(200 << 10)
        let writer = Task.detached { try store.write(payload: state, lastSequence: 100) }
        for sequence in UInt64(101)...300 {
            try appendRecords(log, sequence...sequence)
            try log.sync()
        }
        let written = try await writer.value
        #expect(try log.removeSegments(upTo: written.olderSnapshotSequence) == [])
        #expect(try log.removeSegments(upTo: 100) == [segmentName(1)])
        let loaded = try store.loadNewestValid()?.payload == state
        #expect(loaded)
        #expect(try replay(log, after: 100) == expectedRecords(101...300))
    }
}
