import ChildProcessExit
import Foundation
import Testing

/// What the server tells its operator in its log (issue 18): a start-up summary of what is on,
/// a periodic activity line, the message before its details, JSON lines on request, and no
/// secret anywhere.
@Suite("Server log", .ownThread)
struct ServerLogTests {
    static func line(_ log: String, containing needle: String) throws -> Substring {
        guard let line = log.split(separator: "\n").first(where: { $0.contains(needle) }) else {
            throw TestFailure("no line with \"\(needle)\" in:\n\(log)")
        }
        return line
    }

    @Test("start-up says what is enabled, the message comes before its details, and no secret is logged")
    func startupSummary() async throws {
        let apiKey = "api-key-\(UUID().uuidString)"
        let pushSecret = "push-secret-\(UUID().uuidString)"
        let server = try await startHuddle(["--api-key", apiKey, "--push-webhook", "http://127.0.0.1:9/hook", "--push-webhook-secret", pushSecret])
        try await server.waitForLog(" started ")
        let started = try Self.line(server.logText, containing: " started ")
        for expected in ["tls=off", "http_api=on", "push=on (http://127.0.0.1:9/hook, signed: true)", "fsync=no",
                         "data_dir=\(server.dataDirectory.path)", "commit=", "summary_interval_s=60"] {
            #expect(started.contains(expected), "\(expected) missing from \(started)")
        }
        let listening = try Self.line(server.logText, containing: " listening")
        let message = try #require(listening.range(of: " listening"))
        let detail = try #require(listening.range(of: "url=ws://"))
        #expect(message.lowerBound < detail.lowerBound, "details before the message: \(listening)")
        try await server.stop()
        #expect(!server.logText.contains(apiKey))
        #expect(!server.logText.contains(pushSecret))
    }

    @Test("--summary-interval logs connections, users online, message rates and the log position at info")
    func activitySummary() async throws {
        let server = try await startHuddle(["--summary-interval", "1"])
        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        try alice.subscribe("room:lobby")
        try alice.publish("room:lobby", 1)
        _ = try alice.publications(1)
        try await server.waitForLog("users_online=1", timeout: 20)
        let activity = try Self.line(server.logText, containing: "users_online=1")
        #expect(activity.contains(" info "), "\(activity)")
        #expect(activity.contains("websockets=1"), "\(activity)")
        #expect(activity.contains("messages_in_per_s="), "\(activity)")
        let position = activity.split(separator: " ").first { $0.hasPrefix("log_position=") }.flatMap { Int($0.dropFirst("log_position=".count)) }
        #expect((position ?? 0) >= 2, "signup and publish are logged: \(activity)")
        try await server.stop()
    }

    @Test("--log-format json writes one JSON object per line")
    func jsonLines() async throws {
        let directory = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try StartedProcess(["--host", "127.0.0.1", "--port", "0", "--threads", "1", "--data-dir", directory.path, "--log-format", "json"])
        try await server.waitForOutput("\"message\":\"started\"")
        server.process.terminate()
        var messages: [String] = []
        for line in server.output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
            #expect(object["time"] is String && object["level"] is String)
            messages.append(try #require(object["message"] as? String))
            if object["message"] as? String == "started" {
                #expect(object["fsync"] as? String == "always")
                #expect(object["tls"] as? String == "off")
            }
        }
        #expect(messages.contains("listening"), "\(messages)")
    }
}
