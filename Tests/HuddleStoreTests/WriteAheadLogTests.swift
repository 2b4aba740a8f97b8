import Foundation
import Glibc
import HuddleStore
import Testing

@Suite struct WriteAheadLogTests {
    @Test func recordsHaveTheSpecifiedBytes() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        #expect(try log.append([Array("abc".utf8), []]) == 1...2)
        try log.close()
        let expected = encodedSegmentHeader(firstSequence: 1)
            + encodedRecord(sequence: 1, payload: Array("abc".utf8))
            + encodedRecord(sequence: 2, payload: [])
        #expect(directory.bytes(segmentName(1)) == expected)
    }

    @Test func missingDirectoryIsCreatedWithParents() throws {
        let parent = TemporaryDirectory()
        let path = parent.file("a/b/data")
        let log = try WriteAheadLog(directory: path, syncPolicy: .always)
        #expect(log.recoveryReport.createdDirectory)
        #expect(log.lastSequence == 0)
        try log.append(payload(1))
        try log.close()
        #expect(FileManager.default.fileExists(atPath: path + "/" + segmentName(1)))
        let reopened = try WriteAheadLog(directory: path, syncPolicy: .always)
        #expect(!reopened.recoveryReport.createdDirectory)
        #expect(try replay(reopened) == expectedRecords(1...1))
    }

    @Test func appendAndReplayRoundTripAcrossRotations() throws {
        let directory = TemporaryDirectory()
        var log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        #expect(try appendRecords(log, 1...3) == 1...3)
        try log.rotate()
        try log.rotate()  // nothing appended since: no empty segment is made
        #expect(try appendRecords(log, 4...4) == 4...4)
        try log.rotate()
        #expect(try appendRecords(log, 5...9) == 5...9)
        try log.sync()
        #expect(log.segments.map(\.name) == [segmentName(1), segmentName(4), segmentName(5)])
        #expect(log.segments.map(\.recordCount) == [3, 1, 5])
        #expect(log.recordCount == 9)
        #expect(try replay(log) == expectedRecords(1...9))
        #expect(try replay(log, after: 3) == expectedRecords(4...9))
        #expect(try replay(log, after: 6) == expectedRecords(7...9))
        #expect(try replay(log, after: 9) == [])
        try log.close()

        log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        #expect(log.lastSequence == 9)
        #expect(log.durableSequence == 9)
        #expect(log.recoveryReport.segmentCount == 3)
        #expect(log.recoveryReport.recordCount == 9)
        #expect(log.recoveryReport.firstSequence == 1)
        #expect(log.recoveryReport.truncatedTail == nil)
        #expect(try log.append(payload(10)) == 10)
        #expect(try replay(log) == expectedRecords(1...10))
    }

    @Test func aBatchIsWrittenWholeIntoOneSegment() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always, segmentSizeLimit: 400)
        var batches: [ClosedRange<UInt64>] = []
        var next: UInt64 = 1
        for size in [1, 5, 2, 9, 1, 1, 6, 3] {
            let range = next...(next + UInt64(size) - 1)
            let bytesBefore = log.byteCount
            let segmentsBefore = log.segments.count
            #expect(try appendRecords(log, range) == range)
            // The batch adds exactly its encoded records (plus a header if it opened a segment).
            let encoded = range.reduce(0) { $0 + encodedRecord(sequence: $1, payload: payload($1)).count }
            #expect(log.byteCount == bytesBefore + encoded + 24 * (log.segments.count - segmentsBefore))
            batches.append(range)
            next += UInt64(size)
        }
        #expect(log.segments.count > 2)
        // Segments start only where a batch starts: a batch never straddles two files.
        let batchStarts = Set(batches.map(\.lowerBound))
        for segment in log.segments {
            #expect(batchStarts.contains(segment.firstSequence))
            #expect(segment.byteCount <= 400)
            #expect(directory.size(segment.name) == segment.byteCount)
        }
        #expect(try replay(log) == expectedRecords(1...(next - 1)))
    }

    @Test func aRecordOverTheLimitIsRefusedAndNothingIsWritten() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try appendRecords(log, 1...1)
        let oversized = [UInt8](repeating: 7, count: WriteAheadLog.maximumRecordPayload + 1)
        #expect(throws: StoreError.recordTooLarge(size: oversized.count, limit: WriteAheadLog.maximumRecordPayload)) {
            try log.append([payload(2), oversized])
        }
        #expect(log.lastSequence == 1)
        #expect(directory.size(segmentName(1)) == 24 + encodedRecord(sequence: 1, payload: payload(1)).count)
        #expect(try appendRecords(log, 2...2) == 2...2)
        #expect(try replay(log) == expectedRecords(1...2))
    }

    @Test func syncPolicyDecidesWhenRecordsBecomeDurable() throws {
        let directory = TemporaryDirectory()
        let always = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try appendRecords(always, 1...2)
        #expect(always.durableSequence == 0)
        #expect(try always.syncIfDue())
        #expect(always.durableSequence == 2)
        #expect(try !always.syncIfDue())  // nothing pending
        try always.close()

        let everySecond = try WriteAheadLog(directory: directory.path, syncPolicy: .everySecond)
        let start = monotonicMilliseconds()
        try appendRecords(everySecond, 3...3)
        #expect(try !everySecond.syncIfDue(now: start))
        #expect(everySecond.durableSequence == 2)
        #expect(try everySecond.syncIfDue(now: start + 1000))
        #expect(everySecond.durableSequence == 3)
        try appendRecords(everySecond, 4...4)
        #expect(try !everySecond.syncIfDue(now: start + 1500))
        #expect(try everySecond.syncIfDue(now: start + 2000))
        #expect(everySecond.durableSequence == 4)
        try everySecond.close()

        let never = try WriteAheadLog(directory: directory.path, syncPolicy: .never)
        try appendRecords(never, 5...5)
        #expect(try !never.syncIfDue(now: start + 1_000_000))
        #expect(never.durableSequence == 4)
        try never.sync()
        #expect(never.durableSequence == 5)
        try appendRecords(never, 6...6)
        try never.rotate()  // a closed segment is always synced
        #expect(never.durableSequence == 6)
        try never.close()
    }

    @Test func removeSegmentsDeletesOnlyWholeSegmentsASnapshotCovers() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try appendRecords(log, 1...3)
        try log.rotate()
        try appendRecords(log, 4...6)
        try log.rotate()
        try appendRecords(log, 7...9)
        #expect(try log.removeSegments(upTo: 5) == [segmentName(1)])
        #expect(try log.removeSegments(upTo: 6) == [segmentName(4)])
        #expect(try log.removeSegments(upTo: 100) == [])  // the segment being appended to stays
        #expect(directory.names().filter { $0.hasPrefix("wal-") && $0.hasSuffix(".log") } == [segmentName(7)])
        #expect(try replay(log, after: 6) == expectedRecords(7...9))
        #expect(throws: StoreError.recordsUnavailable(requestedAfter: 2, firstAvailable: 7)) { try log.records(after: 2) }
        try log.close()

        #expect(throws: StoreError.self) { try WriteAheadLog(directory: directory.path, syncPolicy: .always) }
        let reopened = try WriteAheadLog(directory: directory.path, syncPolicy: .always, snapshotSequence: 6)
        #expect(reopened.lastSequence == 9)
        #expect(try replay(reopened, after: 6) == expectedRecords(7...9))
    }

    @Test func aLogBehindItsSnapshotContinuesAfterTheSnapshot() throws {
        let directory = TemporaryDirectory()
        var log = try WriteAheadLog(directory: directory.path, syncPolicy: .never)
        try appendRecords(log, 1...5)
        try log.close()

        // The snapshot reached 8, but records 6...8 never made it to the log's disk.
        log = try WriteAheadLog(directory: directory.path, syncPolicy: .always, snapshotSequence: 8)
        #expect(log.recoveryReport.coveredOnlyBySnapshot == 6...8)
        #expect(log.lastSequence == 8)
        #expect(try replay(log, after: 8) == [])
        #expect(try log.append(payload(9)) == 9)
        #expect(log.segments.map(\.name) == [segmentName(1), segmentName(9)])
        try log.close()

        log = try WriteAheadLog(directory: directory.path, syncPolicy: .always, snapshotSequence: 8)
        #expect(log.recoveryReport.coveredOnlyBySnapshot == nil)
        #expect(try replay(log, after: 8) == expectedRecords(9...9))
        #expect(try log.removeSegments(upTo: 8) == [segmentName(1)])
    }

    @Test func aSecondOpenOfTheSameDirectoryIsRefused() throws {
        let directory = TemporaryDirectory()
        let first = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        #expect(throws: StoreError.directoryLocked(path: directory.path)) {
            try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        }
        try first.close()
        let second = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try second.close()
    }

    /// A child forked while the log is open holds copies of its descriptors — the lock's too —
    /// until it execs (or exits); a server starting a program, or a test process starting
    /// servers, forks at any moment. The log's close must release the directory all the same:
    /// the lock goes with the log, not with the last copy of the descriptor.
    @Test func aClosedLogUnlocksItsDirectoryWhileAForkedChildHoldsItsDescriptors() throws {
        let directory = TemporaryDirectory()
        let closed = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        var child = try ForkedChild()
        try closed.close()
        try WriteAheadLog(directory: directory.path, syncPolicy: .always).close()
        child.release()

        // A log dropped without close (the server's error paths) lets go of the lock the same way.
        child = try {
            let dropped = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
            return try withExtendedLifetime(dropped) { try ForkedChild() }
        }()
        try WriteAheadLog(directory: directory.path, syncPolicy: .always).close()
        child.release()
    }

    @Test func aClosedLogRefusesWrites() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .never)
        try appendRecords(log, 1...2)
        try log.close()
        #expect(log.failureReason != nil)
        #expect(throws: StoreError.logUnusable(reason: "the log is closed")) { try log.append(payload(3)) }
        try log.close()  // twice is fine
        let reopened = try WriteAheadLog(directory: directory.path, syncPolicy: .never)
        #expect(try replay(reopened) == expectedRecords(1...2))  // close synced them
    }

    @Test func replayChecksEveryRecordAgain() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try appendRecords(log, 1...3)
        let second = 24 + encodedRecord(sequence: 1, payload: payload(1)).count
        directory.flipBit(segmentName(1), atByte: second + 17)  // damaged after recovery checked it
        let reader = try log.records(after: 0)
        #expect(try reader.next() == LogRecord(sequence: 1, payload: payload(1)))
        #expect(throws: StoreError.corruptLog(file: segmentName(1), offset: second, reason: "record checksum mismatch")) {
            try reader.next()
        }
    }

    @Test func aReaderIsNotDisturbedByLaterAppendsOrRemovals() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try appendRecords(log, 1...2)
        try log.rotate()
        try appendRecords(log, 3...4)
        let reader = try log.records(after: 0)
        #expect(try reader.next() == LogRecord(sequence: 1, payload: payload(1)))
        try log.rotate()
        try appendRecords(log, 5...5)
        try log.removeSegments(upTo: 4)
        var rest: [LogRecord] = []
        while let record = try reader.next() { rest.append(record) }
        #expect(rest == expectedRecords(2...4))
    }
}

func monotonicMilliseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
}
