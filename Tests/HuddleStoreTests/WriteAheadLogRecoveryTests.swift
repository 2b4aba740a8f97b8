import Foundation
import HuddleStore
import Testing

/// Start-up after a crash: what is cut, what is refused.
@Suite struct WriteAheadLogRecoveryTests {
    /// Records 1...3 in one segment; returns the pristine bytes and where record 3 starts.
    private func threeRecordLog(_ directory: TemporaryDirectory) throws -> (bytes: [UInt8], lastRecordOffset: Int) {
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try appendRecords(log, 1...2)
        let lastRecordOffset = log.byteCount
        try appendRecords(log, 3...3)
        try log.close()
        return (directory.bytes(segmentName(1)), lastRecordOffset)
    }

    @Test func aTornLastRecordIsCutAtEveryPossibleLength() throws {
        let directory = TemporaryDirectory()
        let (pristine, start) = try threeRecordLog(directory)
        #expect(pristine.count - start == 16 + payload(3).count)
        for length in start..<pristine.count {
            directory.write(segmentName(1), Array(pristine[0..<length]))
            let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
            #expect(log.lastSequence == 2)
            #expect(try replay(log) == expectedRecords(1...2))
            if length == start {
                #expect(log.recoveryReport.truncatedTail == nil)  // the record is simply absent
            } else {
                let cut = try #require(log.recoveryReport.truncatedTail)
                #expect(cut.file == segmentName(1))
                #expect(cut.offset == start)
                #expect(cut.bytesRemoved == length - start)
                #expect(cut.reason.contains("incomplete"))
            }
            #expect(directory.size(segmentName(1)) == start)
            // The log goes on from the cut as if the torn record had never been written.
            #expect(try log.append(payload(3)) == 3)
            try log.close()
            #expect(directory.bytes(segmentName(1)) == pristine)
        }
    }

    @Test func aFlippedBitInTheLastRecordIsCut() throws {
        let directory = TemporaryDirectory()
        let (pristine, start) = try threeRecordLog(directory)
        for byte in [start + 4, start + 8, start + 16, pristine.count - 1] {  // crc, sequence, payload
            directory.write(segmentName(1), pristine)
            directory.flipBit(segmentName(1), atByte: byte, bit: 3)
            let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
            #expect(log.recoveryReport.truncatedTail?.offset == start)
            #expect(log.recoveryReport.truncatedTail?.reason == "record checksum mismatch")
            #expect(try replay(log) == expectedRecords(1...2))
            try log.close()
        }
    }

    @Test func aFlippedBitInAMiddleRecordIsRefused() throws {
        let directory = TemporaryDirectory()
        let (pristine, _) = try threeRecordLog(directory)
        let secondRecord = 24 + encodedRecord(sequence: 1, payload: payload(1)).count
        directory.flipBit(segmentName(1), atByte: secondRecord + 20)
        #expect(throws: StoreError.corruptLog(
            file: segmentName(1), offset: secondRecord,
            reason: "record checksum mismatch; a valid record follows at offset \(secondRecord + 16 + payload(2).count), so cutting here would lose it"
        )) {
            try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        }
        // Refusing changed nothing.
        var damaged = pristine
        damaged[secondRecord + 20] ^= 1
        #expect(directory.bytes(segmentName(1)) == damaged)
    }

    @Test func aDamagedLengthInAMiddleRecordDoesNotPassForATornTail() throws {
        // A huge length makes the record run past the end of the file, exactly like a torn
        // write; only the search for valid records after it tells the two apart.
        let directory = TemporaryDirectory()
        _ = try threeRecordLog(directory)
        let secondRecord = 24 + encodedRecord(sequence: 1, payload: payload(1)).count
        directory.flipBit(segmentName(1), atByte: secondRecord + 2, bit: 4)
        let error = #expect(throws: StoreError.self) { try WriteAheadLog(directory: directory.path, syncPolicy: .always) }
        guard case .corruptLog(let file, let offset, let reason) = error else {
            Issue.record("expected corruptLog, got \(String(describing: error))")
            return
        }
        #expect(file == segmentName(1))
        #expect(offset == secondRecord)
        #expect(reason.contains("a valid record follows"))
    }

    @Test func damageInASegmentThatIsNotTheLastIsRefused() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try appendRecords(log, 1...3)
        try log.rotate()
        try appendRecords(log, 4...4)
        try log.close()
        let size = directory.size(segmentName(1))
        directory.truncate(segmentName(1), to: size - 1)
        #expect(throws: StoreError.self) { try WriteAheadLog(directory: directory.path, syncPolicy: .always) }
    }

    @Test func aSequenceGapBetweenSegmentsIsRefusedUnlessASnapshotCoversIt() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try appendRecords(log, 1...3)
        try log.rotate()
        try appendRecords(log, 4...6)
        try log.rotate()
        try appendRecords(log, 7...9)
        try log.close()
        directory.remove(segmentName(4))
        #expect(throws: StoreError.corruptLog(
            file: segmentName(7), offset: 0,
            reason: "sequence gap: \(segmentName(1)) ends at 3, this segment starts at 7, and the snapshot covers only up to 0"
        )) {
            try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        }
        #expect(throws: StoreError.self) { try WriteAheadLog(directory: directory.path, syncPolicy: .always, snapshotSequence: 5) }
        let covered = try WriteAheadLog(directory: directory.path, syncPolicy: .always, snapshotSequence: 6)
        #expect(try replay(covered, after: 6) == expectedRecords(7...9))
    }

    @Test func aRecordWithAValidChecksumButTheWrongSequenceIsRefused() throws {
        let directory = TemporaryDirectory()
        directory.write(segmentName(1), encodedSegmentHeader(firstSequence: 1)
            + encodedRecord(sequence: 1, payload: payload(1))
            + encodedRecord(sequence: 3, payload: payload(3)))
        let offset = 24 + encodedRecord(sequence: 1, payload: payload(1)).count
        #expect(throws: StoreError.corruptLog(file: segmentName(1), offset: offset, reason: "record has sequence 3, expected 2")) {
            try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        }
    }

    @Test(arguments: [0, 8, 12, 20])
    func aDamagedSegmentHeaderIsRefused(byte: Int) throws {
        let directory = TemporaryDirectory()
        _ = try threeRecordLog(directory)
        directory.flipBit(segmentName(1), atByte: byte)
        let error = #expect(throws: StoreError.self) { try WriteAheadLog(directory: directory.path, syncPolicy: .always) }
        guard case .corruptLog(segmentName(1), 0, _) = error else {
            Issue.record("expected corruptLog at offset 0, got \(String(describing: error))")
            return
        }
    }

    @Test func aSegmentUnderTheWrongNameIsRefused() throws {
        let directory = TemporaryDirectory()
        _ = try threeRecordLog(directory)
        directory.rename(segmentName(1), segmentName(2))
        #expect(throws: StoreError.corruptLog(
            file: segmentName(2), offset: 0, reason: "header says the segment starts at 1, its name says 2"
        )) {
            try WriteAheadLog(directory: directory.path, syncPolicy: .always, snapshotSequence: 1)
        }
    }

    @Test func leftoverTemporarySegmentsAreRemoved() throws {
        let directory = TemporaryDirectory()
        _ = try threeRecordLog(directory)
        directory.write(segmentName(4) + ".tmp", Array("HUDDL".utf8))  // a rotation interrupted mid-header
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        #expect(log.recoveryReport.removedTemporaryFiles == [segmentName(4) + ".tmp"])
        #expect(!directory.names().contains(segmentName(4) + ".tmp"))
        #expect(try replay(log) == expectedRecords(1...3))
    }

    @Test func zerosAfterTheLastRecordAreCut() throws {
        // What some file systems show after a crash: the size grew, the data never arrived.
        let directory = TemporaryDirectory()
        let (pristine, _) = try threeRecordLog(directory)
        directory.write(segmentName(1), pristine + [UInt8](repeating: 0, count: 4096))
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        #expect(log.recoveryReport.truncatedTail?.offset == pristine.count)
        #expect(log.recoveryReport.truncatedTail?.bytesRemoved == 4096)
        #expect(try replay(log) == expectedRecords(1...3))
    }
}
