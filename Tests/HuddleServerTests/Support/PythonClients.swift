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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(text)")
        }
        return text
    }
}

/// Runs a process to completion with a time limit, collecting both outputs.
func runProcess(_ executable: String, _ arguments: [String], timeout: Double, input: String? = nil) async throws -> PythonClients.Output {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    let stdin = Pipe()
    process.standardInput = input == nil ? FileHandle.nullDevice : stdin
    try process.run()
    if let input {
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try? stdin.fileHandleForWriting.close()
    }
    // Drain both pipes concurrently so a chatty process never blocks on a full pipe.
    async let out = Task.detached { stdout.fileHandleForReading.readDataToEndOfFile() }.value
    async let err = Task.detached { stderr.fileHandleForReading.readDataToEndOfFile() }.value
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning {
        if Date() > deadline {
            process.terminate()
            throw TestFailure("\(arguments.first ?? executable) did not finish within \(timeout) s")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    return PythonClients.Output(
        status: process.terminationStatus,
        stdout: String(decoding: await out, as: UTF8.self),
        stderr: String(decoding: await err, as: UTF8.self)
    )
}
