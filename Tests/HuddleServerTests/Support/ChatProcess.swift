import ChildProcessExit
import Foundation
import Synchronization

/// A `huddle-chat` process driven as a script would: commands written to its stdin (a pipe,
/// so it runs in its line mode), its stdout collected line by line. Its settings file and its
/// HOME are the test's, never the real user's.
final class ChatProcess: @unchecked Sendable {
    let process = Process()
    let settingsFile: URL?
    private let input = Pipe()
    /// `ended`: its stdout reached end of file, so every line it printed is in `lines`.
    private let output = Mutex<(lines: [String], partial: String, ended: Bool)>(([], "", false))

    static var binary: URL { ServerProcess.binary.deletingLastPathComponent().appendingPathComponent("huddle-chat") }

    /// With `settingsFile`, that one file holds the session (`$HUDDLE_CHAT_CONFIG`); without,
    /// huddle-chat keeps its sessions per server and user under `home`, as it does by default.
    init(url: String, settingsFile: URL?, home: URL? = nil, arguments: [String] = []) throws {
        self.settingsFile = settingsFile
        process.executableURL = Self.binary
        process.arguments = ["--url", url] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HUDDLE_CHAT_CONFIG"] = settingsFile?.path
        environment["HOME"] = (home ?? settingsFile?.deletingLastPathComponent())?.path
        process.environment = environment
        process.standardInput = input
        let stdout = try OutputPipe()
        process.standardOutput = stdout.writing
        process.standardError = FileHandle.nullDevice
        stdout.readToEnd { [weak self] data in
            self?.output.withLock { output in
                guard let data else {
                    output.ended = true
                    return
                }
                output.partial += String(decoding: data, as: UTF8.self)
                while let newline = output.partial.firstIndex(of: "\n") {
                    output.lines.append(String(output.partial[..<newline]))
                    output.partial = String(output.partial[output.partial.index(after: newline)...])
                }
            }
        }
        try process.run()
        // The child has its copy; the end of file comes once it (and only it) is gone.
        try stdout.writing.close()
    }

    deinit {
        if !process.hasExited { kill(process.processIdentifier, SIGKILL) }
    }

    var lines: [String] { output.withLock { $0.lines } }

    /// Types `line` (and Enter).
    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Ends its input: it quits once the commands already sent have run.
    func closeInput() throws {
        try input.fileHandleForWriting.close()
    }

    /// Waits for an output line, from the `after`-th on, that `matches`; returns it.
    @discardableResult
    func line(_ what: String, after: Int = 0, timeout: Double = 20, _ matches: @escaping (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            let all = lines
            if let found = all.dropFirst(after).first(where: matches) { return found }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("huddle-chat never printed \(what) within \(timeout) s; it printed:\n" + all.joined(separator: "\n"))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits for exactly the line `text`, from the `after`-th line on.
    @discardableResult
    func line(_ text: String, after: Int = 0, timeout: Double = 20) async throws -> String {
        try await line("\"\(text)\"", after: after, timeout: timeout) { $0 == text }
    }

    /// Waits for the process to end and its output to be read to the end (the process can
    /// exit before the last lines it wrote were collected); its exit status.
    func exitStatus(timeout: Double = 20) async throws -> Int32 {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            if let status = process.exitStatusIfExited, output.withLock({ $0.ended }) { return status }
            guard ContinuousClock.now < deadline else { throw TestFailure("huddle-chat did not exit within \(timeout) s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
