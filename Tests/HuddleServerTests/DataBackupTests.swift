import ChildProcessExit
import Foundation
import Synchronization
import Testing

/// `huddle data backup` (issue 18): a copy taken while a server writes restores to a directory
/// that starts and holds every write acknowledged before the backup began.
@Suite("Data backup", .ownThread)
struct DataBackupTests {
    /// Publishes {"n": 1, 2, …} to one room until stopped, keeping every acknowledged n.
    final class Writer: @unchecked Sendable {
        let acknowledged = Mutex<[Int]>([])
        let failure = Mutex<String?>(nil)
        private let stopped = Atomic<Bool>(false)
        private var thread: Thread?
        static let channel = "room:backup"

        init(port: Int) {
            let thread = Thread { [self] in
                do {
                    let client = try V1Client(port: port)
                    try client.signUp("backup_writer")
                    var n = 0
                    while !stopped.load(ordering: .relaxed) {
                        n += 1
                        try client.ok("publish", ["channel": Self.channel, "data": ["n": n]])
                        acknowledged.withLock { $0.append(n) }
                    }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
            }
            self.thread = thread
            thread.start()
        }

        var count: Int { acknowledged.withLock { $0.count } }
        func stop() { stopped.store(true, ordering: .relaxed) }

        func waitFor(count target: Int, timeout: Double = 60) async throws {
            let deadline = Date().addingTimeInterval(timeout)
            while count < target {
                if let failure = failure.withLock({ $0 }) { throw TestFailure("writer failed: \(failure)") }
                guard Date() < deadline else { throw TestFailure("writer reached only \(count) of \(target) publishes") }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    @Test("a backup under write load restores to a server holding every write acknowledged before it began")
    func backupUnderLoadRestores() async throws {
        let data = try ServerProcess.makeDataDirectory()
        let backup = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-backup-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: data)
            try? FileManager.default.removeItem(at: backup)
        }
        // Snapshots every second, so the server rotates and drops segments while the backup copies.
        let limits = ["--rate-limit", "100000", "--user-rate-limit", "100000"]
        let server = try await DurableServer.start(["--fsync", "always", "--snapshot-interval", "1"] + limits, dataDirectory: data)
        let writer = Writer(port: server.port)
        try await writer.waitFor(count: 300)
        try await server.waitForLogCount("] snapshot written", atLeast: 1)

        let before = writer.acknowledged.withLock { $0 }
        let result = try runChildToCompletion(DurableServer.binary.path, ["data", "backup", "--data-dir", data.path, "--to", backup.path], timeout: 120)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("backed up"), "\(result.output)")
        // Still under load after the copy: the writer went on while it ran.
        try await writer.waitFor(count: before.count + 50)
        writer.stop()
        _ = try await server.stop()

        let verify = try runChildToCompletion(DurableServer.binary.path, ["data", "verify", "--data-dir", backup.path], timeout: 60)
        #expect(verify.status == 0, "\(verify.output)")

        let restored = try await DurableServer.start(limits, dataDirectory: backup)
        let client = try V1Client(port: restored.port)
        try client.logIn("backup_writer")
        let history = try client.fullHistory(Writer.channel)
        let stored = history.publications.compactMap { ($0["data"] as? [String: Any])?["n"] as? Int }
        // The channel's offset counts every publish the restored state applied: at least every one
        // acknowledged before the backup. A room keeps its newest 1000 (protocol.md, Channels), and
        // those are exactly the writes up to that offset, in order, each at the offset it was given.
        #expect(history.offset >= before.count, "restored offset \(history.offset), \(before.count) were acknowledged before the backup")
        #expect(!stored.isEmpty && stored == Array((history.offset - stored.count + 1)...history.offset),
                "not the newest writes up to \(history.offset): \(stored.count) stored, first \(stored.prefix(3)), last \(stored.suffix(3))")
        #expect(history.publications.allSatisfy { ($0["offset"] as? Int) == (($0["data"] as? [String: Any])?["n"] as? Int) })
        _ = try await restored.stop()
    }

    @Test("backup refuses a directory that is not empty")
    func backupRefusesNonEmptyTarget() throws {
        let data = try ServerProcess.makeDataDirectory()
        let target = try ServerProcess.makeDataDirectory()
        defer { for directory in [data, target] { try? FileManager.default.removeItem(at: directory) } }
        try "keep".write(to: target.appendingPathComponent("precious.txt"), atomically: true, encoding: .utf8)
        let result = try runChildToCompletion(DurableServer.binary.path, ["data", "backup", "--data-dir", data.path, "--to", target.path], timeout: 60)
        #expect(result.status != 0)
        #expect(result.output.contains(target.path), "\(result.output)")
        #expect(FileManager.default.fileExists(atPath: target.appendingPathComponent("precious.txt").path))
    }
}
