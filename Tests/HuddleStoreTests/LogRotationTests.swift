import HuddleStore
import Testing

/// A rotation performed off the log's thread (`beginRotation`, `LogRotation`, `finishRotation`):
/// records appended meanwhile are held, not in any file, until the new segment exists.
@Suite struct LogRotationTests {
    @Test func recordsAppendedDuringARotationGoToTheNewSegmentOnceItExists() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always, segmentSizeLimit: 64)
        log.rotatesOnAnotherThread = true
        _ = try appendRecords(log, 1...3)
        #expect(log.segmentIsFull)
        #expect(log.segments.count == 1, "append rotated by itself")
        let rotation = try #require(try log.beginRotation())
        #expect(try log.beginRotation() == nil, "a second rotation while one runs")
        #expect(rotation.sequence == 3)

        _ = try appendRecords(log, 4...5)
        #expect(log.lastSequence == 5)
        #expect(log.durableSequence == 0)
        #expect(directory.names() == [segmentName(1), "wal.lock"], "the next segment exists before the closed one is durable")
        let early = try #require(try log.beginSync())
        #expect(early.sequence == 3, "a sync claims records in no file")
        _ = early.perform()
        #expect(try replay(log) == expectedRecords(1...3))

        let outcome = rotation.perform()
        if case .failure(let error) = outcome.synced {
            Issue.record("the rotation's sync failed: \(error)")
            return
        }
        #expect(try log.finishRotation(rotation) == nil)
        #expect(log.durableSequence == 3, "the closed segment is durable, the held records not yet")
        #expect(log.segments.map(\.name) == [segmentName(1), segmentName(4)])
        #expect(try replay(log) == expectedRecords(1...5))
        try log.sync()
        #expect(log.durableSequence == 5)
        try log.close()

        let reopened = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        #expect(try replay(reopened) == expectedRecords(1...5))
    }
}
