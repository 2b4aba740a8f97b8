import ChildProcessExit
import Foundation

/// Third-party clients for interop tests: Python `websockets` from PyPI, installed once into a
/// virtual environment under .build (so the tests need nothing preinstalled but python3).
enum PythonClients {
    static let websocketsVersion = "15.0.1"

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }
    static var scripts: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Python") }
    static var venv: URL { packageRoot.appendingPathComponent(".build/test-venv") }
    static var python: URL { venv.appendingPathComponent("bin/python") }

    /// Creates the venv on first use. Serialised through a lock file: parallel test processes
    /// (and parallel tests) must not both run pip into the same directory.
    static let ready: Result<URL, TestFailure> = Result {
        let marker = venv.appendingPathComponent("websockets-\(websocketsVersion).ok")
        if FileManager.default.fileExists(atPath: marker.path) { return python }
        try FileManager.default.createDirectory(at: venv.deletingLastPathComponent(), withIntermediateDirectories: true)
        let lock = open(venv.path + ".lock", O_CREAT | O_RDWR, 0o644)
        defer { close(lock) }
        flock(lock, LOCK_EX)
        defer { flock(lock, LOCK_UN) }
        if FileManager.default.fileExists(atPath: marker.path) { return python }
        try runChecked("/usr/bin/env", ["python3", "-m", "venv", venv.path])
        try runChecked(python.path, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "websockets==\(websocketsVersion)"])
        _ = FileManager.default.createFile(atPath: marker.path, contents: Data())
        return python
    }.mapError { TestFailure("cannot prepare the Python test clients: \($0)") }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        /// The last line of stdout parsed as a JSON object (the scripts' result line).
        var result: [String: Any] {
            let line = stdout.split(separator: "\n").last.map(String.init) ?? "{}"
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// Runs one of the scripts in Tests/HuddleServerTests/Python with the venv's interpreter.
    static func run(_ script: String, _ arguments: [String], timeout: Double = 60) async throws -> Output {
        let python = try ready.get()
        return try await runProcess(python.path, [scripts.appendingPathComponent(script).path] + arguments, timeout: timeout)
    }

    @discardableResult
    static func runChecked(_ executable: String, _ arguments: [String]) throws -> String {
        // pip may download on a slow network: a generous limit, but a limit.
        let (status, text) = try runChildToCompletion(executable, arguments, timeout: 600)
        guard status == 0 else {
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) exited \(status): \(text)")
        }
        return text
    }
}

/// Runs a process to completion with a time limit, collecting both outputs — into files, not
/// pipes, for the reason `runChildToCompletion` gives.
func runProcess(_ executable: String, _ arguments: [String], timeout: Double, input: String? = nil) async throws -> PythonClients.Output {
    let directory = FileManager.default.temporaryDirectory
    let stdoutFile = directory.appendingPathComponent("huddle-child-\(UUID().uuidString).out")
    let stderrFile = directory.appendingPathComponent("huddle-child-\(UUID().uuidString).err")
    for file in [stdoutFile, stderrFile] where !FileManager.default.createFile(atPath: file.path, contents: nil) {
        throw TestFailure("cannot create \(file.path)")
    }
    defer {
        try? FileManager.default.removeItem(at: stdoutFile)
        try? FileManager.default.removeItem(at: stderrFile)
    }
    let stdout = try FileHandle(forWritingTo: stdoutFile)
    let stderr = try FileHandle(forWritingTo: stderrFile)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = stdout
    process.standardError = stderr
    let stdin = Pipe()
    process.standardInput = input == nil ? FileHandle.nullDevice : stdin
    try process.run()
    try? stdout.close()
    try? stderr.close()
    if let input {
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try? stdin.fileHandleForWriting.close()
    }
    let deadline = Date().addingTimeInterval(timeout)
    while !process.hasExited {
        if Date() > deadline {
            process.terminate()
            throw TestFailure("\(arguments.first ?? executable) did not finish within \(timeout) s")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    return PythonClients.Output(
        status: process.exitStatusIfExited ?? -1,
        stdout: (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
    )
}
