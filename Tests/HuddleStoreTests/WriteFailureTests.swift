import Foundation
import Glibc
import HuddleStore
import Testing

/// A full disk, simulated with RLIMIT_FSIZE: a write past the limit fails with EFBIG (SIGXFSZ
/// ignored), after a partial write up to the limit — the torn append a full disk produces.
///
/// The limit is per process, so while it is lowered every test's file writes are subject to it.
/// The log under test is first grown past 2 MiB and the limit set just above that; no other test
/// in this target writes a file anywhere near that size, and the tests here run one at a time.
@Suite(.serialized) struct WriteFailureTests {
    @Test func aFailedAppendLeavesNothingBehindAndTheLogGoesOn() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        let big = (1...9).map { UInt8($0) }.map { [UInt8](repeating: $0, count: 256 << 10) }
        for chunk in big { try log.append(chunk) }
        try log.sync()
        let sizeBefore = directory.size(segmentName(1))
        #expect(sizeBefore > 2 << 20)

        let batch = (10...19).map { payload(UInt64($0), size: 200) }  // 2160 bytes encoded
        try withFileSizeLimit(sizeBefore + 1000) {
            let error = #expect(throws: StoreError.self) { try log.append(batch) }
            #expect(error?.errno == EFBIG)
            #expect(directory.size(segmentName(1)) == sizeBefore)
            #expect(log.lastSequence == 9)
            #expect(log.failureReason == nil)
            // What still fits is accepted: the log continues right where it was.
            #expect(try log.append(payload(10, size: 200)) == 10)
            try log.sync()
        }

        #expect(try log.append(Array(batch[1...])) == 11...19)
        try log.sync()
        let expected = big.enumerated().map { LogRecord(sequence: UInt64($0.offset + 1), payload: $0.element) }
            + (10...19).map { LogRecord(sequence: UInt64($0), payload: payload(UInt64($0), size: 200)) }
        #expect(try replay(log) == expected)
        try log.close()

        let reopened = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        #expect(reopened.recoveryReport.truncatedTail == nil)
        #expect(try replay(reopened) == expected)
    }

    @Test func aFailedSnapshotWriteLeavesThePreviousSnapshots() throws {
        let directory = TemporaryDirectory()
        let store = SnapshotStore(directory: directory.path)
        try store.write(payload: payload(1), lastSequence: 1)
        // Incompressible, so the file outgrows the limit.
        let noise = incompressibleBytes(3 << 20)
        try withFileSizeLimit(2 << 20) {
            let error = #expect(throws: StoreError.self) { try store.write(payload: noise, lastSequence: 2) }
            #expect(error?.errno == EFBIG)
        }
        #expect(directory.names().filter { $0.hasPrefix("snapshot-") } == [snapshotName(1)])
        #expect(try store.loadNewestValid()?.lastSequence == 1)
    }
}

/// Runs `body` with RLIMIT_FSIZE lowered to `bytes` and SIGXFSZ ignored, restoring both after.
func withFileSizeLimit(_ bytes: Int, _ body: () throws -> Void) throws {
    let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
    var saved = rlimit()
    #expect(getrlimit(resource, &saved) == 0)
    let previousHandler = signal(SIGXFSZ, SIG_IGN)
    defer {
        #expect(setrlimit(resource, &saved) == 0)
        signal(SIGXFSZ, previousHandler)
    }
    var lowered = saved
    lowered.rlim_cur = rlim_t(bytes)
    #expect(setrlimit(resource, &lowered) == 0)
    try body()
}
