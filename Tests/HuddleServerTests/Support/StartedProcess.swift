import Foundation

/// The real `huddle` binary started with exactly the given arguments (no defaults added, unlike
/// `ServerProcess`), its output in a file (see `runChildToCompletion` for why not a pipe), for
/// tests of start-up itself: what the server logs with an unusual host, say.
final class StartedProcess: @unchecked Sendable {
    let process = Process()
    private let outputFile: URL

    init(_ arguments: [String]) throws {
        outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-started-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: outputFile.path, contents: nil) else {
            throw TestFailure("cannot create \(outputFile.path)")
        }
        let output = try FileHandle(forWritingTo: outputFile)
        process.executableURL = ServerProcess.binary
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try? output.close()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: outputFile)
    }

    var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }

    /// Waits until the output contains `needle`; fails early if the process exits first.
    func waitForOutput(_ needle: String, timeout: Double = 20) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !output.contains(needle) {
            guard process.isRunning else { throw TestFailure("huddle exited before printing \"\(needle)\"; output:\n\(output)") }
            guard Date() < deadline else { throw TestFailure("huddle never printed \"\(needle)\" within \(timeout) s; output:\n\(output)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
