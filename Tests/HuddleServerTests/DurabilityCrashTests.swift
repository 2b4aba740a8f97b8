import ChildProcessExit
import Foundation
import Testing

/// Issue 4, crash test: writers publish while the server is killed with SIGKILL at random
/// moments and restarted on the same data directory; at the end every acknowledged publish is
/// stored exactly once, at the offset its reply named, with the exact data sent, offsets are
/// contiguous, and nothing else is there but (at most once, intact) publishes whose reply the
/// crash swallowed. `HUDDLE_CRASH_KILLS` (default 20) sets the number of kills; the long run is
///
///     HUDDLE_CRASH_KILLS=200 swift test --filter acknowledgedPublishesSurviveRepeatedKills
///
/// (`HUDDLE_TEST_BINARY=.build/release/huddle` runs the durability tests against another build).
@Suite(.ownThread) struct DurabilityCrashTests {
    static var kills: Int { Int(ProcessInfo.processInfo.environment["HUDDLE_CRASH_KILLS"] ?? "") ?? 20 }

    @Test func acknowledgedPublishesSurviveRepeatedKills() async throws {
        let kills = Self.kills
        let data = try ServerProcess.makeDataDirectory()
        let writers = try CrashWriters(writers: 4)
        defer { writers.terminate() }
        let started = Date()
        var tornTails = 0
        var gracefulRestarts = 0
        var backgroundSnapshots = 0

        func serve(_ arguments: [String]) async throws -> DurableServer {
            let server = try await DurableServer.start(arguments, dataDirectory: data)
            if server.logText.contains("cut a torn record") { tornTails += 1 }
            try writers.point(at: server)
            return server
        }

        for round in 1...kills {
            // Vary what a kill interrupts: fsync policy; every third run snapshots every second
            // and lives long enough to write one or two.
            let fsync = ["always", "always", "everysec", "no"].randomElement()!
            let snapshotEverySecond = round % 3 == 0
            let server = try await serve(["--fsync", fsync, "--snapshot-interval", snapshotEverySecond ? "1" : "3600"])
            try await writers.awaitProgress(server)
            let delay = snapshotEverySecond ? Int.random(in: 800...1_800) : Int.random(in: 0...250)
            try await Task.sleep(for: .milliseconds(delay))
            server.kill9()
            try writers.pointNowhere()
            backgroundSnapshots += server.logText.components(separatedBy: "] snapshot written").count - 1
            // Now and then a graceful restart, so that later kills recover from snapshot + log.
            if round % 5 == 0 {
                let graceful = try await serve(["--snapshot-interval", "3600"])
                try await writers.awaitProgress(graceful)
                try writers.pointNowhere()
                let status = try await graceful.stop()
                #expect(status == 0, "graceful stop: \(graceful.logText)")
                gracefulRestarts += 1
            }
        }

        // The last run: the writers finish against a live server.
        let last = try await serve(["--snapshot-interval", "3600"])
        try await writers.awaitProgress(last)
        let writerSummary = try await writers.finish()
        let result = try await writers.check(last)
        #expect((result["acked"] as? Int ?? 0) > 0)
        #expect(try await last.stop() == 0, "\(last.logText)")
        let verify = try await DurableServer.dataCommand("verify", dataDirectory: data)
        #expect(verify.status == 0, "huddle data verify: \(verify.output)")

        // Once more from the shutdown snapshot alone.
        let again = try await DurableServer.start(["--snapshot-interval", "3600"], dataDirectory: data)
        let recheck = try await writers.check(again)
        #expect(recheck["publications"] as? Int == result["publications"] as? Int)
        #expect(try await again.stop() == 0)

        let seconds = Date().timeIntervalSince(started)
        print("""
            durability crash run: kills=\(kills) graceful-restarts=\(gracefulRestarts) background-snapshots=\(backgroundSnapshots) \
            torn-tails-cut=\(tornTails) acked-checked=\(result["acked"] ?? "?") in-doubt-present=\(result["in_doubt_present"] ?? "?") \
            in-doubt-absent=\(result["in_doubt_absent"] ?? "?") rooms=\(result["rooms"] ?? "?") \
            publications=\(result["publications"] ?? "?") seconds=\(String(format: "%.1f", seconds)) writer=\(writerSummary)
            """)
        if verify.status == 0, result["ok"] as? Bool == true, recheck["ok"] as? Bool == true {
            try? FileManager.default.removeItem(at: data)
            writers.removeFiles()
        } else {
            print("kept for inspection: data \(data.path), journals \(writers.work.path)")
        }
    }

    /// A background snapshot taken while clients publish must hold exactly the log records up
    /// to its sequence: after a SIGKILL, start-up loads it and replays the log after it, and
    /// not one publication may come back twice. (A snapshot that already holds the commands of
    /// the core turn in progress — applied, not yet logged — replays them twice.)
    @Test func backgroundSnapshotTakenUnderLoadMatchesTheLog() async throws {
        let data = try ServerProcess.makeDataDirectory()
        // 16 connections keep the core busy, so the turn that starts a snapshot has requests in it.
        let writers = try CrashWriters(writers: 16)
        defer { writers.terminate() }
        var logs: [String] = []
        // Three times: a background snapshot under load, a kill soon after it, a restart that
        // loads it and replays the log after it.
        for _ in 1...3 {
            let server = try await DurableServer.start(["--snapshot-interval", "1"], dataDirectory: data)
            try writers.point(at: server)
            try await writers.awaitProgress(server)
            let deadline = Date().addingTimeInterval(15)
            while !server.logText.contains("] snapshot written"), Date() < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(50))
            server.kill9()
            try writers.pointNowhere()
            logs.append(server.logText)
        }
        let restarted = try await DurableServer.start(["--snapshot-interval", "3600"], dataDirectory: data)
        #expect(restarted.logText.contains("loaded snapshot"), "\(restarted.logText)")
        try writers.point(at: restarted)
        try await writers.awaitProgress(restarted)
        _ = try await writers.finish()
        let result = try await writers.check(restarted)
        #expect(try await restarted.stop() == 0)
        if result["ok"] as? Bool == true {
            try? FileManager.default.removeItem(at: data)
            writers.removeFiles()
        } else {
            print("kept for inspection: data \(data.path), journals \(writers.work.path); server logs:\n\(logs.joined(separator: "\n---\n"))")
        }
    }
}

/// The Python crash writers (`Python/durability_writer.py write`), running across server
/// restarts: they read the server's URL from a file before every connect, so pointing them at a
/// new server (or at none) is writing that file.
final class CrashWriters {
    let work: URL
    let count: Int
    private let prefix: String
    private let urlFile: URL
    private let stopFile: URL
    private let journals: URL
    private let stdoutFile: URL
    private let stderrFile: URL
    private let process = Process()
    private let python: URL
    private let acks: AckCounter
    static let script = PythonClients.scripts.appendingPathComponent("durability_writer.py").path

    /// `clientIDs`: every publish carries a client_id and what is in doubt is sent again.
    init(writers: Int, clientIDs: Bool = false) throws {
        python = try PythonClients.ready.get()
        count = writers
        work = try ServerProcess.makeDataDirectory()
        urlFile = work.appendingPathComponent("url")
        stopFile = work.appendingPathComponent("stop")
        journals = work.appendingPathComponent("journals")
        stdoutFile = work.appendingPathComponent("writer.out")
        stderrFile = work.appendingPathComponent("writer.err")
        prefix = "c" + UUID().uuidString.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(7)
        acks = AckCounter(directory: journals, writers: writers)
        try Data().write(to: urlFile)
        _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.executableURL = python
        process.arguments = [Self.script, "write", "--url-file", urlFile.path, "--stop-file", stopFile.path,
                             "--state-dir", journals.path, "--prefix", prefix, "--writers", "\(writers)"]
            + (clientIDs ? ["--client-id"] : [])
        process.standardOutput = try FileHandle(forWritingTo: stdoutFile)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()
    }

    var stderrText: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    func point(at server: DurableServer) throws { try point(at: [server.url]) }
    /// Several servers (a cluster's nodes): each writer starts on one and moves on when it fails.
    func point(at urls: [String]) throws { try Data(urls.joined(separator: "\n").utf8).write(to: urlFile, options: .atomic) }
    func pointNowhere() throws { try Data().write(to: urlFile, options: .atomic) }

    /// Waits until the writers got at least one more acknowledgement (from `server`).
    func awaitProgress(_ server: DurableServer, timeout: Double = 20) async throws {
        try await awaitProgress(timeout: timeout) { server.logText }
    }

    /// Waits until the writers got at least one more acknowledgement; `logs` explains a failure.
    func awaitProgress(timeout: Double = 20, logs: () -> String) async throws {
        let before = acks.count()
        let deadline = Date().addingTimeInterval(timeout)
        while acks.count() <= before {
            guard !process.hasExited else { throw TestFailure("the writers exited: \(stderrText)") }
            guard Date() < deadline else {
                throw TestFailure("no acknowledged publish within \(timeout) s; writers:\n\(stderrText)\nserver log:\n\(logs())")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Stops the writers and returns their summary line.
    func finish() async throws -> String {
        _ = FileManager.default.createFile(atPath: stopFile.path, contents: nil)
        let deadline = Date().addingTimeInterval(30)
        while !process.hasExited {
            guard Date() < deadline else { throw TestFailure("the writers did not stop") }
            try await Task.sleep(for: .milliseconds(20))
        }
        let summary = ((try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(process.exitStatusIfExited == 0, "writers: \(summary) \(stderrText)")
        return summary
    }

    /// Runs the checker against `server`; expects it to pass and returns its result line.
    @discardableResult
    func check(_ server: DurableServer) async throws -> [String: Any] { try await check(url: server.url) }

    /// Runs the checker against the server at `url`; `expectingOK: false` only measures (its
    /// result counts, say, the acknowledged writes missing: `acked_missing`).
    @discardableResult
    func check(url: String, expectingOK: Bool = true) async throws -> [String: Any] {
        let output = try await runProcess(python.path, [
            Self.script, "check", "--url", url, "--state-dir", journals.path, "--prefix", prefix, "--writers", "\(count)",
        ], timeout: 300)
        if expectingOK {
            #expect(output.status == 0 && output.result["ok"] as? Bool == true, "check: \(output.stdout)\(output.stderr)")
        }
        return output.result
    }

    func terminate() {
        if !process.hasExited { kill(process.processIdentifier, SIGKILL) }
    }

    func removeFiles() { try? FileManager.default.removeItem(at: work) }
}

/// Counts "ack" lines appended to the writers' journals, reading only what is new each time.
final class AckCounter {
    private let files: [URL]
    private var offsets: [UInt64]
    private var total = 0
    private var partial: [[UInt8]]

    init(directory: URL, writers: Int) {
        files = (0..<writers).map { directory.appendingPathComponent("w\($0).log") }
        offsets = Array(repeating: 0, count: writers)
        partial = Array(repeating: [], count: writers)
    }

    func count() -> Int {
        for (index, file) in files.enumerated() {
            guard let handle = try? FileHandle(forReadingFrom: file) else { continue }
            defer { try? handle.close() }
            guard (try? handle.seek(toOffset: offsets[index])) != nil, let data = try? handle.readToEnd(), !data.isEmpty else { continue }
            offsets[index] += UInt64(data.count)
            var bytes = partial[index] + Array(data)
            while let newline = bytes.firstIndex(of: 0x0A) {
                if bytes.starts(with: Array("ack ".utf8)) { total += 1 }
                bytes.removeSubrange(...newline)
            }
            partial[index] = bytes
        }
        return total
    }
}
