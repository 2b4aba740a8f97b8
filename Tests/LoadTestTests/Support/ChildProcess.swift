import ChildProcessExit
import Foundation
import Synchronization

/// A program the tests start — a Huddle server, a stand-in server, the harness itself — with its
/// output collected, and killed when the test lets go of it. Waiting is polling with
/// `Task.sleep`, never `waitUntilExit` (which spins a run loop on a cooperative thread).
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    private let output = Mutex("")
    /// The pipe reached its end: everything the program wrote is in `output`.
    private let outputEnded = Mutex(false)

    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        let pipe = try OutputPipe()
        process.standardOutput = pipe.writing
        process.standardError = pipe.writing
        pipe.readToEnd { [weak self] data in
            if let data {
                self?.output.withLock { $0 += String(decoding: data, as: UTF8.self) }
            } else {
                self?.outputEnded.withLock { $0 = true }
            }
        }
        try process.run()
        // The child has its copy; the end of file comes once it (and only it) is gone.
        try pipe.writing.close()
    }

    deinit {
        if !process.hasExited { kill(process.processIdentifier, SIGKILL) }
    }

    var pid: Int32 { process.processIdentifier }
    var text: String { output.withLock { $0 } }

    /// The build products directory, where `swift build` put `huddle` and `huddle-loadtest`
    /// next to the test bundle.
    static var products: URL {
        URL(fileURLWithPath: try! FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).deletingLastPathComponent()
    }

    /// Waits until the output contains `needle`, and returns what follows it up to the end of that line.
    func waitFor(_ needle: String, timeout: Double) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = self.text
            if let range = text.range(of: needle) {
                return String(text[range.upperBound...].prefix { $0 != "\n" })
            }
            guard Date() < deadline, !process.hasExited else {
                throw ChildProcessFailure("\(process.executableURL?.lastPathComponent ?? "?") never printed \"\(needle)\"; output:\n\(text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for the exit — and for the last of the output, which the pipe may still hold when
    /// the process is gone — and returns the status.
    func exitStatus(timeout: Double) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            // Gone, and its output read to the end of file, which may come a moment after.
            if let status = process.exitStatusIfExited, outputEnded.withLock({ $0 }) { return status }
            guard Date() < deadline else {
                kill(process.processIdentifier, SIGKILL)
                let ended = outputEnded.withLock { $0 }
                throw ChildProcessFailure(
                    "\(process.executableURL?.lastPathComponent ?? "?") still running after \(timeout) s (output ended: \(ended)); output:\n\(text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

struct ChildProcessFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
