import Glibc
import HuddleStore
import Testing

/// A sync performed off the log's thread (`beginSync`, `LogSync.perform`, `finishSync`).
@Suite struct LogSyncTests {
    @Test func durableOnlyOnceTheSyncIsHandedBackAndOnlyUpToWhereItBegan() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        #expect(try log.beginSync() == nil)  // nothing to sync
        try log.append([payload(1), payload(2)])
        let sync = try #require(try log.beginSync())
        #expect(sync.sequence == 2)
        try log.append(payload(3))  // appended while the sync runs: not covered by it
        let outcome = sync.perform()
        #expect(log.durableSequence == 0)
        try log.finishSync(sync, outcome)
        #expect(log.durableSequence == 2)
        let next = try #require(try log.beginSync())
        #expect(next.sequence == 3)
        // The segment rotates (which syncs it) before the sync is back: it still ends well.
        try log.rotate()
        #expect(log.durableSequence == 3)
        try log.finishSync(next, next.perform())
        #expect(log.durableSequence == 3)
        try log.close()
    }

    @Test func aFailedSyncMakesTheLogRefuseWrites() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        try log.append(payload(1))
        let sync = try #require(try log.beginSync())
        _ = sync.perform()
        #expect(throws: StoreError.self) {
            try log.finishSync(sync, .failure(.system(call: "fdatasync", path: "wal", errno: EIO)))
        }
        #expect(log.durableSequence == 0)
        #expect(log.failureReason != nil)
        #expect(throws: StoreError.self) { try log.append(payload(2)) }
    }
}
