import ChildProcessExit
import Foundation

/// Runs a short command (openssl, python -m venv, pip) to completion, synchronously, with a
/// time limit, and returns its exit status and combined output.
///
/// Output goes to a temporary file, not a pipe: while tests spawn processes on several threads,
/// a pipe's write end can be inherited by an unrelated long-lived child (a server started at
/// the same moment), and reading the pipe "to the end" then waits for that child to exit — a
/// whole test run hung that way. A file has no end to wait for. The exit is asked of the kernel
/// (`exitStatusIfExited`: `isRunning` can lag for the same reason) and polled with a deadline.
func runChildToCompletion(_ executable: String, _ arguments: [String], timeout: Double, environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
    let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-child-\(UUID().uuidString).log")
    guard FileManager.default.createFile(atPath: outputFile.path, contents: nil) else {
        throw TestFailure("cannot create \(outputFile.path)")
    }
    defer { try? FileManager.default.removeItem(at: outputFile) }
    let output = try FileHandle(forWritingTo: outputFile)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = output
    process.standardError = output
    try process.run()
    try? output.close()
    let deadline = Date().addingTimeInterval(timeout)
    while !process.hasExited {
        if Date() > deadline {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        usleep(10_000)
    }
    let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
    return (process.exitStatusIfExited ?? -1, text)
}
