import ChildProcessExit
import Foundation
import Testing

/// Issue 18: the periodic activity line counts every refusal class, by kind, since the line
/// before — only the kinds that happened — in text and in JSON logs.
@Suite("Activity summary refusals", .ownThread)
struct ActivitySummaryRefusalTests {
    /// The `key=value` details of each activity line logged so far, oldest first.
    static func activityLines(_ log: String) -> [[String: String]] {
        log.split(separator: "\n").filter { $0.contains("] activity ") }.map { line in
            Dictionary(line.split(separator: " ").compactMap { field in
                guard let equals = field.firstIndex(of: "=") else { return nil }
                return (String(field[..<equals]), String(field[field.index(after: equals)...]))
            }) { $1 }
        }
    }

    /// The activity lines once there are more than `count` of them.
    static func activityLines(after count: Int, of server: ServerProcess) async throws -> [[String: String]] {
        let deadline = Date().addingTimeInterval(30)
        while true {
            let lines = activityLines(server.logText)
            if lines.count > count { return lines }
            guard Date() < deadline else { throw TestFailure("no activity line after the \(count) logged in 30 s:\n\(server.logText)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func total(_ key: String, _ lines: [[String: String]]) -> Int {
        lines.reduce(0) { $0 + (Int($1[key] ?? "") ?? 0) }
    }

    @Test("fair-share refusals and a failed login are counted by kind in the next activity line, and not again")
    func refusalsByKind() async throws {
        let server = try await startHuddle(["--summary-interval", "1", "--user-rate-limit", "50"])
        let (first, token) = try ProtocolClient.signedUp("alice", port: server.port)
        // Each connection stays inside its own burst of 100; together they are over alice's.
        let clients = try [first] + (0..<2).map { _ in try ProtocolClient(port: server.port, credential: .header(token)) }
        var replies: [JSONObject] = []
        for client in clients { replies += try client.pipeline(Array(repeating: ("whoami", [:]), count: 90)) }
        let limited = replies.filter { (($0["error"] as? JSONObject)?["code"] as? String) == "rate_limited" }.count
        #expect(limited > 0, "270 requests over a burst of 100")
        let stranger = try ProtocolClient(port: server.port)
        #expect(try stranger.errorCode("login", ["login": "alice", "password": "not-alice's-password"]) == "invalid_credentials")

        // Every refusal so far is in some activity line; then a line with none follows.
        var seen = Self.activityLines(server.logText)
        while Self.total("refused_budget_requests", seen) < limited || Self.total("refused_invalid_credentials", seen) < 1 {
            seen = try await Self.activityLines(after: seen.count, of: server)
        }
        #expect(Self.total("refused_rate_limited", seen) == limited, "\(seen)")
        #expect(Self.total("refused_budget_requests", seen) == limited, "\(seen)")
        #expect(Self.total("refused_invalid_credentials", seen) == 1, "\(seen)")
        let refusing = seen.filter { $0.keys.contains { $0.hasPrefix("refused_") } }
        #expect(refusing.allSatisfy { Int($0["refusals"] ?? "") == Int($0["refused_rate_limited"] ?? "0")! + Int($0["refused_invalid_credentials"] ?? "0")! },
                "the total counts each refusal once (budget_* is a breakdown of rate_limited): \(refusing)")

        let next = try await Self.activityLines(after: seen.count, of: server)[seen.count]
        #expect(!next.keys.contains { $0.hasPrefix("refused_") }, "only kinds refused since the line before: \(next)")
        #expect(next["refusals"] == "0", "\(next)")
        try await server.stop()
    }

    @Test("--log-format json: each refusal kind is a member of the activity object")
    func refusalsInJSON() async throws {
        let directory = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try StartedProcess(["--host", "127.0.0.1", "--port", "0", "--threads", "1", "--data-dir", directory.path,
                                         "--kdf-iterations", "1000", "--fsync", "no", "--log-format", "json", "--summary-interval", "1"])
        try await server.waitForOutput("\"url\":\"ws://127.0.0.1:")
        let listening = try #require(server.output.range(of: "\"url\":\"ws://127.0.0.1:"))
        let port = try #require(Int(server.output[listening.upperBound...].prefix { $0.isNumber }))
        let stranger = try ProtocolClient(port: port)
        #expect(try stranger.errorCode("login", ["login": "nobody", "password": "not-a-password"]) == "invalid_credentials")
        try await server.waitForOutput("\"refused_invalid_credentials\":\"1\"")
        let line = try #require(server.output.split(separator: "\n").first { $0.contains("refused_invalid_credentials") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        #expect(object["message"] as? String == "activity")
        #expect(object["level"] as? String == "info")
        #expect(object["refusals"] as? String == "1", "\(line)")
        server.process.terminate()
    }
}
