import ChildProcessExit
import Foundation
import HuddleWebSocket

/// The `huddle` binary for durability tests: started on a given data directory (kept across
/// restarts), optionally under a file-size limit, killed with SIGKILL or stopped with SIGTERM.
/// Unlike `ServerProcess` it notices a server that exits instead of listening (a refused
/// start), and it writes the server's stderr to a file, so the log is complete after an exit.
final class DurableServer: @unchecked Sendable {
    let process = Process()
    let dataDirectory: URL
    let logFile: URL
    private(set) var port = 0

    /// The outcome of a start: listening, or exited with a status before it listened.
    enum Start {
        case listening(DurableServer)
        case exited(status: Int32, log: String)
    }

    /// The binary under test: the build's own `huddle`, or `HUDDLE_TEST_BINARY` (e.g. a release
    /// build, for long runs outside the suite).
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["HUDDLE_TEST_BINARY"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return ServerProcess.binary
    }

    /// For tests whose point is what a shutdown does, not how fast (the drain answers a slow
    /// login, a graceful stop writes its snapshot): an exit budget a loaded machine cannot run
    /// out. The default 2 s would then cut the drain or give the snapshot up (README, "Shutdown").
    static let patientExit = ["--exit-budget", "60"]

    /// Arguments every durability test passes: loopback, a free port (or `port`, for a server
    /// restarted where its clients know it), cheap password hashing.
    static func baseArguments(dataDirectory: URL, port: Int = 0) -> [String] {
        ["--host", "127.0.0.1", "--port", "\(port)", "--threads", "2", "--log-level", "info", "--kdf-iterations", "1000",
         "--data-dir", dataDirectory.path]
    }

    /// Starts the server; `fileSizeBlocks` runs it under `ulimit -f` (512-byte blocks in dash).
    private init(_ arguments: [String], dataDirectory: URL, port: Int, fileSizeBlocks: Int?, environment: [String: String]) async throws {
        self.dataDirectory = dataDirectory
        logFile = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-log-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let all = Self.baseArguments(dataDirectory: dataDirectory, port: port) + arguments
        let executable: URL
        let executableArguments: [String]
        if let blocks = fileSizeBlocks {
            // exec keeps the pid: the Process's pid is the server's, so SIGKILL reaches it.
            executable = URL(fileURLWithPath: "/bin/sh")
            let quoted = ([Self.binary.path] + all).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            executableArguments = ["-c", "ulimit -f \(blocks) && exec " + quoted.joined(separator: " ")]
        } else {
            executable = Self.binary
            executableArguments = all
        }
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardError = try FileHandle(forWritingTo: logFile)
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try await ServerLauncher.shared.run(process, executable: executable, arguments: executableArguments)
    }

    /// Starts a server and waits until it listens or exits.
    static func launch(
        _ arguments: [String] = [], dataDirectory: URL, port: Int = 0, fileSizeBlocks: Int? = nil, environment: [String: String] = [:],
        timeout: Double = 30
    ) async throws -> Start {
        let server = try await DurableServer(
            arguments, dataDirectory: dataDirectory, port: port, fileSizeBlocks: fileSizeBlocks, environment: environment)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let log = server.logText
            if let range = log.range(of: "url=ws://127.0.0.1:") {
                server.port = Int(log[range.upperBound...].prefix { $0.isNumber }) ?? 0
                return .listening(server)
            }
            if let status = server.process.exitStatusIfExited {
                return .exited(status: status, log: server.logText)
            }
            guard Date() < deadline else {
                kill(server.process.processIdentifier, SIGKILL)
                throw TestFailure("server neither listened nor exited within \(timeout) s; log:\n\(log)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Starts a server that must listen.
    static func start(
        _ arguments: [String] = [], dataDirectory: URL, fileSizeBlocks: Int? = nil, environment: [String: String] = [:]
    ) async throws -> DurableServer {
        switch try await launch(arguments, dataDirectory: dataDirectory, fileSizeBlocks: fileSizeBlocks, environment: environment) {
        case .listening(let server): return server
        case .exited(let status, let log): throw TestFailure("server exited with \(status) instead of listening; log:\n\(log)")
        }
    }

    deinit {
        if !process.hasExited { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: logFile)
    }

    var url: String { "ws://127.0.0.1:\(port)" }
    var pid: Int32 { process.processIdentifier }
    var logText: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// SIGKILL, and wait until the process is gone (its files are then closed, its locks free).
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        while !process.hasExited { usleep(1_000) }
    }

    /// SIGTERM and wait; returns the exit status.
    @discardableResult
    func stop(timeout: Double = 15) async throws -> Int32 {
        if !process.hasExited { process.terminate() }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = process.exitStatusIfExited { return status }
            if Date() > deadline {
                kill(process.processIdentifier, SIGKILL)
                throw TestFailure("server did not exit within \(timeout) s of SIGTERM; log:\n\(logText)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits until the log contains `needle`.
    func waitForLog(_ needle: String, timeout: Double = 10) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !logText.contains(needle) {
            guard Date() < deadline else { throw TestFailure("server log never showed \"\(needle)\"; log:\n\(logText)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until the log contains `needle` at least `count` times.
    func waitForLogCount(_ needle: String, atLeast count: Int, timeout: Double = 20) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while logText.components(separatedBy: needle).count - 1 < count {
            guard Date() < deadline else { throw TestFailure("server log never showed \"\(needle)\" \(count) times; log:\n\(logText)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// `huddle data verify|inspect --data-dir DIR`: status and stdout + stderr.
    static func dataCommand(_ command: String, dataDirectory: URL) async throws -> (status: Int32, output: String) {
        let output = try await runProcess(binary.path, ["data", command, "--data-dir", dataDirectory.path], timeout: 60)
        return (output.status, output.stdout + output.stderr)
    }
}

/// A blocking client of the /v1 protocol on `RawClient`: requests by id, events kept aside.
final class V1Client {
    let raw: RawClient
    private var nextID = 0
    /// Events (messages without an id) in arrival order.
    private(set) var events: [[String: Any]] = []

    init(port: Int, timeout: Double = 10) throws {
        raw = try RawClient(port: port, receiveTimeout: timeout)
        try raw.upgrade(path: "/v1", extraHeaders: ["Sec-WebSocket-Protocol: huddle.v1"])
    }

    /// Sends a request and reads until its reply; returns the whole reply object.
    @discardableResult
    func request(_ op: String, _ arguments: [String: Any] = [:]) throws -> [String: Any] {
        nextID += 1
        let id = "\(nextID)"
        var object = arguments
        object["id"] = id
        object["op"] = op
        let bytes = Array(try JSONSerialization.data(withJSONObject: object))
        try raw.sendFrame(.text, bytes)
        while true {
            let message = try nextMessage()
            if let replyID = message["id"] as? String, replyID == id { return message }
            if message["id"] == nil { events.append(message) }
        }
    }

    /// Sends a request that must succeed; returns its `result`.
    @discardableResult
    func ok(_ op: String, _ arguments: [String: Any] = [:]) throws -> [String: Any] {
        let reply = try request(op, arguments)
        guard reply["ok"] as? Bool == true, let result = reply["result"] as? [String: Any] else {
            throw TestFailure("\(op) \(arguments) failed: \(reply)")
        }
        return result
    }

    /// The next event: one already read, or the next message from the server.
    func nextEvent() throws -> [String: Any] {
        if !events.isEmpty { return events.removeFirst() }
        while true {
            let message = try nextMessage()
            if message["id"] == nil { return message }
        }
    }

    private func nextMessage() throws -> [String: Any] {
        while true {
            guard let event = try raw.nextEvent() else { throw TestFailure("connection ended") }
            switch event {
            case .text(let bytes):
                guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
                    throw TestFailure("not a JSON object: \(String(decoding: bytes, as: UTF8.self))")
                }
                return object
            case .ping(let payload):
                try raw.sendFrame(.pong, payload)
            case .close(let code, let reason):
                throw TestFailure("server closed: \(String(describing: code)) \(reason)")
            case .binary, .pong:
                continue
            }
        }
    }

    /// Signs up `username` (password and email derived from it); returns the token.
    @discardableResult
    func signUp(_ username: String) throws -> String {
        let result = try ok("signup", ["username": username, "email": "\(username)@example.com", "password": "pw-\(username)-secret"])
        return result["token"] as? String ?? ""
    }

    func logIn(_ username: String) throws {
        try ok("login", ["login": username, "password": "pw-\(username)-secret"])
    }

    /// Every publication of `channel`, oldest first, read by paging `history` (100 a page).
    func fullHistory(_ channel: String) throws -> (offset: Int, epoch: String, publications: [[String: Any]]) {
        var before: Int?
        var pages: [[[String: Any]]] = []
        var latest = 0
        var epoch = ""
        repeat {
            var arguments: [String: Any] = ["channel": channel, "limit": 100]
            if let before { arguments["before"] = before }
            let result = try ok("history", arguments)
            if pages.isEmpty {
                latest = result["offset"] as? Int ?? -1
                epoch = result["epoch"] as? String ?? ""
            }
            pages.append(result["publications"] as? [[String: Any]] ?? [])
            before = result["next_before"] as? Int
        } while before != nil
        return (latest, epoch, pages.flatMap { $0 }.reversed())
    }
}

/// Files of a data directory, by kind, sorted by name (so by sequence).
enum DataFiles {
    static func list(_ directory: URL, suffix: String) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(suffix) }
            .sorted()
            .map { directory.appendingPathComponent($0) }
    }

    static func segments(_ directory: URL) throws -> [URL] { try list(directory, suffix: ".log") }
    static func snapshots(_ directory: URL) throws -> [URL] { try list(directory, suffix: ".snap") }

    /// A log record's place in its segment (HuddleStore/README.md: 24-byte segment header,
    /// then length u32, CRC u32, sequence u64, payload).
    struct RecordSpan {
        var offset: Int
        var length: Int
        var sequence: UInt64
        var payloadOffset: Int { offset + 16 }
        var end: Int { offset + 16 + length }
    }

    static func records(in segment: URL) throws -> [RecordSpan] {
        let bytes = try [UInt8](Data(contentsOf: segment))
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        var spans: [RecordSpan] = []
        var offset = 24
        while offset + 16 <= bytes.count {
            let length = u32(offset)
            guard offset + 16 + length <= bytes.count else { break }
            spans.append(RecordSpan(offset: offset, length: length, sequence: u64(offset + 8)))
            offset += 16 + length
        }
        return spans
    }

    /// Flips bit `bit` of the byte at `offset`.
    static func flipBit(in file: URL, at offset: Int, bit: Int = 0) throws {
        let handle = try FileHandle(forUpdating: file)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        guard var byte = try handle.read(upToCount: 1)?.first else { throw TestFailure("\(file.lastPathComponent) has no byte \(offset)") }
        byte ^= UInt8(1 << bit)
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: [byte])
    }

    static func truncate(_ file: URL, to size: Int) throws {
        let handle = try FileHandle(forUpdating: file)
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(size))
    }

    static func size(_ file: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? -1
    }
}

/// Whether two JSON values are equal (compared as canonical, key-sorted serializations).
func jsonEqual(_ a: Any?, _ b: Any?) -> Bool {
    func canonical(_ value: Any?) -> Data? {
        guard let value else { return nil }
        return try? JSONSerialization.data(withJSONObject: ["v": value], options: [.sortedKeys])
    }
    guard let left = canonical(a), let right = canonical(b) else { return false }
    return left == right
}
