import ChildProcessExit
import Foundation
import Testing

/// A parsed Prometheus text exposition (format 0.0.4): samples and `# TYPE` lines.
struct PrometheusText {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    var samples: [Sample] = []
    var types: [String: String] = [:]

    init(_ text: String) throws {
        for line in text.split(separator: "\n").map(String.init) where !line.isEmpty {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count >= 4 { types[String(parts[2])] = String(parts[3]) }
                continue
            }
            if line.hasPrefix("#") { continue }
            samples.append(try Self.sample(line))
        }
    }

    private static func sample(_ line: String) throws -> Sample {
        var name = ""
        var labels: [String: String] = [:]
        var rest: Substring
        if let brace = line.firstIndex(of: "{"), let close = line.lastIndex(of: "}") {
            name = String(line[..<brace])
            var body = line[line.index(after: brace)..<close]
            while let equals = body.firstIndex(of: "=") {
                let key = body[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: ", "))
                var cursor = body.index(after: equals)
                guard cursor < body.endIndex, body[cursor] == "\"" else { throw TestFailure("bad labels in \(line)") }
                cursor = body.index(after: cursor)
                var value = ""
                while cursor < body.endIndex, body[cursor] != "\"" {
                    if body[cursor] == "\\" { cursor = body.index(after: cursor) }
                    value.append(body[cursor])
                    cursor = body.index(after: cursor)
                }
                labels[key] = value
                body = body[body.index(after: cursor)...]
            }
            rest = line[line.index(after: close)...]
        } else {
            let space = line.firstIndex(of: " ") ?? line.endIndex
            name = String(line[..<space])
            rest = line[space...]
        }
        let fields = rest.split(separator: " ")
        guard let first = fields.first, let value = Double(first) ?? (first == "+Inf" ? .infinity : nil) else {
            throw TestFailure("bad sample line: \(line)")
        }
        return Sample(name: name, labels: labels, value: value)
    }

    /// The sum of the samples named `name` whose labels include `labels`; nil when none matches.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        let matching = samples.filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }
        return matching.isEmpty ? nil : matching.reduce(0) { $0 + $1.value }
    }

    static func fetch(port: Int) throws -> PrometheusText {
        let response = try HTTPExchange(port: port, "GET", "/metrics")
        guard response.status == 200 else { throw TestFailure("/metrics answered \(response.status)") }
        guard response.headers["content-type"]?.hasPrefix("text/plain") == true else {
            throw TestFailure("/metrics content type \(response.headers["content-type"] ?? "none")")
        }
        return try PrometheusText(response.body)
    }
}

/// protocol.md "HTTP API": `GET /metrics` in Prometheus text format.
@Suite(.ownThread) struct MetricsTests {
    @Test func metricsCountTrafficAndErrorsByCode() async throws {
        let server = try await startHuddle()
        let baseline = try PrometheusText.fetch(port: server.port)
        #expect(baseline.types["huddle_connections"] == "gauge")
        #expect(baseline.types["huddle_messages_received_total"] == "counter")
        #expect(baseline.types["huddle_messages_sent_total"] == "counter")
        #expect(baseline.types["huddle_deliveries_total"] == "counter")
        #expect(baseline.types["huddle_errors_total"] == "counter")
        #expect(baseline.types["huddle_command_duration_seconds"] == "histogram")

        let (alice, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        try alice.subscribe("room:lobby")
        try bob.subscribe("room:lobby")
        for index in 1...3 { try alice.publish("room:lobby", index) }
        _ = try alice.publications(3)
        _ = try bob.publications(3)
        try alice.sendText("garbage")
        _ = try alice.nextReply()
        try alice.sendText("[]")
        _ = try alice.nextReply()
        _ = try bob.errorCode("subscribe", ["channel": "inbox:alice"])
        _ = try bob.errorCode("nope")
        // 2 signups + 2 subscribes + 3 publishes + 2 bad_json + 1 forbidden + 1 unknown_op
        let requests = 11.0

        let metrics = try PrometheusText.fetch(port: server.port)
        let received = (metrics.value("huddle_messages_received_total") ?? 0) - (baseline.value("huddle_messages_received_total") ?? 0)
        #expect(received >= requests, "received \(received)")
        let sent = (metrics.value("huddle_messages_sent_total") ?? 0) - (baseline.value("huddle_messages_sent_total") ?? 0)
        #expect(sent >= requests + 6, "sent \(sent): 11 replies and 6 publication events")
        let deliveries = (metrics.value("huddle_deliveries_total") ?? 0) - (baseline.value("huddle_deliveries_total") ?? 0)
        #expect(deliveries >= 6, "deliveries \(deliveries)")
        #expect(metrics.value("huddle_errors_total", ["code": "bad_json"]) == 2)
        #expect(metrics.value("huddle_errors_total", ["code": "forbidden"]) == 1)
        #expect(metrics.value("huddle_errors_total", ["code": "unknown_op"]) == 1)
        #expect(metrics.value("huddle_command_duration_seconds_count", ["op": "publish"]) == 3)
        #expect(metrics.value("huddle_command_duration_seconds_count", ["op": "signup"]) == 2)
        #expect(metrics.value("huddle_command_duration_seconds_bucket", ["op": "publish", "le": "+Inf"]) == 3)
        #expect((metrics.value("huddle_command_duration_seconds_sum", ["op": "publish"]) ?? -1) >= 0)
        let connections = metrics.samples.filter { $0.name == "huddle_connections" }
        #expect(!connections.isEmpty && connections.allSatisfy { $0.labels["state"] != nil }, "huddle_connections is by state")
    }

    @Test func connectionGaugeFollowsConnections() async throws {
        let server = try await startHuddle()
        let before = try PrometheusText.fetch(port: server.port).value("huddle_connections") ?? 0
        var clients: [ProtocolClient] = []
        clients.append(try ProtocolClient(port: server.port))
        clients.append(try ProtocolClient.signedUp("alice", port: server.port).0)
        clients.append(try ProtocolClient.signedUp("bob", port: server.port).0)
        for client in clients { _ = try client.ok("ping") }
        let during = try PrometheusText.fetch(port: server.port)
        #expect((during.value("huddle_connections") ?? 0) - before == 3)
        // The three WebSockets; this /metrics request itself is an "other" connection.
        #expect(during.value("huddle_connections", ["state": "websocket"]) == 3)
        #expect((during.value("huddle_connections", ["state": "other"]) ?? 0) >= 1)
        clients.removeAll()
        // Counted attempts, not a wall-clock deadline: on a busy machine a sleeping test may
        // resume late, and it must still look again before giving up.
        var attempts = 0
        var after = -1.0
        repeat {
            after = try PrometheusText.fetch(port: server.port).value("huddle_connections") ?? 0
            if after == before { break }
            try await Task.sleep(for: .milliseconds(50))
            attempts += 1
        } while attempts < 60
        #expect(after == before)
    }

    @Test func rateLimitedAndNotAuthenticatedAreCountedByCode() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        _ = try client.errorCode("whoami")
        let replies = try client.pipeline(Array(repeating: ("ping", [:]), count: 110))
        let limited = replies.filter { ($0["error"] as? JSONObject)?["code"] as? String == "rate_limited" }.count
        let metrics = try PrometheusText.fetch(port: server.port)
        #expect(metrics.value("huddle_errors_total", ["code": "not_authenticated"]) == 1)
        #expect(metrics.value("huddle_errors_total", ["code": "rate_limited"]) == Double(limited))
        #expect(limited > 0)
    }
}
