import Foundation
import HuddleStore
import Testing

/// Append + fdatasync throughput on this machine: measured, printed, never asserted (timings
/// depend on the disk). Opt-in, since it writes tens of megabytes and takes seconds; one test
/// at a time, so they do not share the disk:
///
///     HUDDLE_STORE_MEASURE=1 swift test -c release --filter HuddleStoreTests.ThroughputMeasurement
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["HUDDLE_STORE_MEASURE"] != nil))
struct ThroughputMeasurement {
    @Test(arguments: [1, 100])
    func appendAndSync(batchSize: Int) throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .always)
        let batch = (0..<batchSize).map { payload(UInt64($0), size: 200) }
        var latencies: [Double] = []
        let start = Date()
        while Date().timeIntervalSince(start) < 3 {
            let before = Date()
            try log.append(batch)
            try log.sync()
            latencies.append(Date().timeIntervalSince(before))
        }
        let elapsed = Date().timeIntervalSince(start)
        latencies.sort()
        let commits = latencies.count
        print(String(
            format: "append+fdatasync, batches of %d x 200 B: %d commits in %.2f s = %.0f commits/s, %.0f records/s, %.1f MB/s; commit latency median %.3f ms, p99 %.3f ms",
            batchSize, commits, elapsed, Double(commits) / elapsed, Double(commits * batchSize) / elapsed,
            Double(log.byteCount) / elapsed / 1e6, latencies[commits / 2] * 1e3, latencies[commits * 99 / 100] * 1e3))
        #expect(log.lastSequence == UInt64(commits * batchSize))
        #expect(log.durableSequence == log.lastSequence)
        var count = 0
        let reader = try log.records(after: 0)
        while let record = try reader.next() {
            count += 1
            #expect(record.payload.count == 200)
        }
        #expect(count == commits * batchSize)
    }

    @Test func appendWithoutSync() throws {
        let directory = TemporaryDirectory()
        let log = try WriteAheadLog(directory: directory.path, syncPolicy: .never)
        let batch = (0..<100).map { payload(UInt64($0), size: 200) }
        let start = Date()
        var batches = 0
        while Date().timeIntervalSince(start) < 2 {
            try log.append(batch)
            batches += 1
        }
        let elapsed = Date().timeIntervalSince(start)
        print(String(format: "append only (.never), batches of 100 x 200 B: %.0f records/s, %.1f MB/s",
            Double(batches * 100) / elapsed, Double(log.byteCount) / elapsed / 1e6))
        #expect(log.lastSequence == UInt64(batches * 100))
    }
}
