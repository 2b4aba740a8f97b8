import ChildProcessExit
import Foundation
import Synchronization

/// The real `huddle` binary, started on free ports for one test and stopped at the end.
/// Ports come from the server's own "listening" log lines (it binds port 0), so parallel
/// tests never race for a port.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port = 0
    private(set) var tlsPort: Int?
    private let log = Mutex("")

    static var binary: URL {
        // The test bundle runs from the build products directory, next to the huddle executable.
        let products = URL(fileURLWithPath: try! FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent()
        return products.appendingPathComponent("huddle")
    }

    /// The server's data directory: a fresh temporary one unless the test passes its own
    /// (to restart a server on the same data).
    let dataDirectory: URL
    private let ownsDataDirectory: Bool

    /// A new, empty directory for a server's data, removed by the caller (or by the server
    /// object that created it).
    static func makeDataDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-data-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Starts `huddle` with `arguments` (plus --port 0, a data directory and the log level)
    /// and waits until it listens.
    init(_ arguments: [String], tls: TestCertificates? = nil, dataDirectory: URL? = nil) async throws {
        if let dataDirectory {
            self.dataDirectory = dataDirectory
            ownsDataDirectory = false
        } else {
            self.dataDirectory = try Self.makeDataDirectory()
            ownsDataDirectory = true
        }
        var all = ["--host", "127.0.0.1", "--port", "0", "--threads", "2", "--log-level", "debug", "--data-dir", self.dataDirectory.path]
        if let tls {
            all += ["--tls-port", "0", "--tls-cert", tls.serverCertificate.path, "--tls-key", tls.serverKey.path]
        }
        all += arguments
        process.executableURL = Self.binary
        process.arguments = all
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        stderr.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.append(String(decoding: data, as: UTF8.self))
        }
        try process.run()
        try await waitForLog("url=ws://", timeout: 20)
        port = try parsePort(scheme: "ws")
        if tls != nil {
            try await waitForLog("url=wss://", timeout: 5)
            tlsPort = try parsePort(scheme: "wss")
        }
    }

    deinit {
        // No waitUntilExit here: on Linux it spins a run loop, and in a deinit running on one of
        // the (two, on 2 cores) cooperative threads it can hang the whole test run. SIGKILL
        // needs no waiting, and removing the directory is safe while the process dies.
        if !process.hasExited { kill(process.processIdentifier, SIGKILL) }
        if ownsDataDirectory { try? FileManager.default.removeItem(at: dataDirectory) }
    }

    var url: String { "ws://127.0.0.1:\(port)" }
    var tlsURL: String { "wss://127.0.0.1:\(tlsPort ?? 0)" }
    var logText: String { log.withLock { $0 } }

    private func append(_ text: String) {
        log.withLock { $0 += text }
    }

    /// Waits until the server's log contains `needle`.
    func waitForLog(_ needle: String, timeout: Double = 5) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !logText.contains(needle) {
            guard Date() < deadline else {
                throw TestFailure("server log never showed \"\(needle)\" within \(timeout) s; log:\n\(logText)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private func parsePort(scheme: String) throws -> Int {
        let marker = "url=\(scheme)://127.0.0.1:"
        guard let range = logText.range(of: marker) else { throw TestFailure("no \(scheme) url in log") }
        let digits = logText[range.upperBound...].prefix { $0.isNumber }
        guard let port = Int(digits) else { throw TestFailure("bad port in log") }
        return port
    }

    /// Sends SIGTERM and waits for the exit; returns the exit status. The default allows for a
    /// 2-core machine at load 15+ (a graceful exit waits for close handshakes and writes a final
    /// snapshot); a hung server still fails the test.
    @discardableResult
    func stop(timeout: Double = 30) async throws -> Int32 {
        if let status = process.exitStatusIfExited { return status }
        process.terminate()
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = process.exitStatusIfExited { return status }
            if Date() > deadline {
                kill(process.processIdentifier, SIGKILL)
                throw TestFailure("server did not exit within \(timeout) s of SIGTERM")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// SIGKILL, and wait until the process is gone (its files are then closed, its locks free).
    func kill9() async throws {
        kill(process.processIdentifier, SIGKILL)
        let deadline = Date().addingTimeInterval(10)
        while !process.hasExited {
            guard Date() < deadline else { throw TestFailure("server still running 10 s after SIGKILL") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
