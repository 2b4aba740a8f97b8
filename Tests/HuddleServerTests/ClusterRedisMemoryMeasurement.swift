import ChildProcessExit
import Foundation
import RedisTestSupport
import Testing

/// Redis memory while real nodes write for a long time (issue 14, acceptance 4): the snapshotter
/// writes every `--snapshot-interval` and trims the log behind the older kept snapshot, so
/// `used_memory` follows one to two intervals of writes, not the cluster's age. Printed, never
/// asserted. Opt-in (HUDDLE_CLUSTER_MEMORY_SECONDS sets the run's length, default 120 s; with
/// HUDDLE_TEST_BINARY a release build):
///
///     HUDDLE_CLUSTER_MEMORY=1 swift test --filter ClusterRedisMemoryMeasurement
@Suite(.ownThread, .enabled(if: ProcessInfo.processInfo.environment["HUDDLE_CLUSTER_MEMORY"] != nil))
struct ClusterRedisMemoryMeasurement {
    @Test func redisMemoryStaysBoundedWhileNodesWriteWithSnapshots() async throws {
        let seconds = ProcessInfo.processInfo.environment["HUDDLE_CLUSTER_MEMORY_SECONDS"].flatMap { Double($0) } ?? 120
        let cluster = try await ClusterHarness(nodes: 2, arguments: [
            "--snapshot-interval", "5", "--rate-limit", "100000", "--user-rate-limit", "100000", "--user-publish-bytes", "100000000",
        ])
        // A user may keep 16 MiB published in rooms: the writers are new users every 40k messages.
        var writers = try cluster.indices.map { try ProtocolClient.signedUp("writer\($0)_0", port: cluster.port($0)).0 }
        let perUser = 40_000
        func redis(_ arguments: [String]) -> String { RedisProbe.command(port: cluster.redis.port, arguments) ?? "" }
        func usedMemory() -> String {
            redis(["INFO", "memory"]).split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") }.map { String($0.dropFirst(12)) } ?? "?"
        }
        let text = String(repeating: "chat text ", count: 20)
        let start = Date()
        var nextReport = start
        var written = 0
        var lines: [String] = []
        while Date().timeIntervalSince(start) < seconds {
            for index in writers.indices {
                written += try writers[index].publishAll("room:memory-\(index)", (0..<50).map { ["text": text, "n": $0] }).count
                if written % (perUser * writers.count) < 50 * writers.count {
                    writers[index] = try ProtocolClient.signedUp("writer\(index)_\(written)", port: cluster.port(index)).0
                }
            }
            if Date() >= nextReport {
                nextReport = nextReport.addingTimeInterval(seconds / 12)
                lines.append(String(
                    format: "  %5.0f s: %8d messages written, log position %@, XLEN %@, used_memory %@", Date().timeIntervalSince(start), written,
                    "\(Int(try cluster.metrics(0).value("huddle_cluster_log_position") ?? 0))", redis(["XLEN", "huddle:log"]), usedMemory()))
            }
        }
        lines.append(String(format: "  %5.0f s: %8d messages written, XLEN %@, used_memory %@", Date().timeIntervalSince(start), written, redis(["XLEN", "huddle:log"]), usedMemory()))
        print("redis memory, 2 nodes writing 2×50-publication pipelines, snapshots every 5 s:\n" + lines.joined(separator: "\n"))
    }
}
