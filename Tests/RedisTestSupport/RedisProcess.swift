import ChildProcessExit
import Foundation

/// A real `redis-server` (or `redis-sentinel`) for one test: a free loopback port, a fresh
/// temporary directory, the configuration the issue asks for (AOF, `appendfsync always`), tied
/// to the test process (`ServerLauncher`: SIGKILL when it dies) and killed, its directory
/// removed, when the object goes. Ready means it answered PING.
public final class RedisProcess: @unchecked Sendable {
    public enum Role: Sendable {
        case primary
        case replica(of: Int)
        /// A Sentinel monitoring the primary on this port as `mymaster`, quorum 1.
        case sentinel(monitoring: Int)
    }

    public static let masterName = "mymaster"
    public let role: Role
    public let directory: URL
    public private(set) var port = 0
    private var process = Process()

    public var endpoint: String { "redis://127.0.0.1:\(port)" }
    public var logText: String { (try? String(contentsOf: directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? "" }

    public init(_ role: Role = .primary) async throws {
        self.role = role
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Another process can take the free port between the probe and redis's bind: try anew.
        for attempt in 1...5 {
            port = try FreePort.take()
            do {
                try await launch()
                return
            } catch let failure as TestFailure where logText.contains("Address already in use") && attempt < 5 {
                _ = failure
            }
        }
    }

    deinit {
        if !process.hasExited { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// SIGKILL, and wait until the kernel reports it gone (its port and files are then free).
    public func kill9() async throws {
        kill(process.processIdentifier, SIGKILL)
        let deadline = Date().addingTimeInterval(10)
        while !process.hasExited {
            guard Date() < deadline else { throw TestFailure("redis still running 10 s after SIGKILL") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// SIGSTOP: it keeps its connections open and answers nothing, like a partitioned host.
    public func pause() { kill(process.processIdentifier, SIGSTOP) }
    public func resume() { kill(process.processIdentifier, SIGCONT) }

    /// Starts it again on the same port and directory (its AOF): what an operator's restart does.
    public func restart() async throws {
        guard process.hasExited else { throw TestFailure("restart of a redis that still runs") }
        try await launch()
    }

    private func launch() async throws {
        let configuration = directory.appendingPathComponent("redis.conf")
        try configurationText().write(to: configuration, atomically: true, encoding: .utf8)
        process = Process()
        var arguments = [configuration.path]
        if case .sentinel = role { arguments.append("--sentinel") }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try await ServerLauncher.shared.run(process, executable: URL(fileURLWithPath: "/usr/bin/redis-server"), arguments: arguments)
        let deadline = Date().addingTimeInterval(20)
        while RedisProbe.command(port: port, ["PING"], timeout: 0.5) != "PONG" {
            guard !process.hasExited else { throw TestFailure("redis-server exited at start-up; log:\n\(logText)") }
            guard Date() < deadline else { throw TestFailure("redis-server did not answer PING within 20 s; log:\n\(logText)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private func configurationText() -> String {
        var lines = [
            "port \(port)", "bind 127.0.0.1", "dir \(directory.path)", "logfile \(directory.path)/redis.log",
            "daemonize no", "save \"\"",
        ]
        switch role {
        case .primary:
            lines += ["appendonly yes", "appendfsync always"]
        case .replica(let primary):
            lines += ["appendonly yes", "appendfsync always", "replicaof 127.0.0.1 \(primary)"]
        case .sentinel(let primary):
            lines += [
                "sentinel monitor \(Self.masterName) 127.0.0.1 \(primary) 1",
                "sentinel down-after-milliseconds \(Self.masterName) 1000",
                "sentinel failover-timeout \(Self.masterName) 5000",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

}
