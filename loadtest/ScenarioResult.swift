import Foundation

/// What one scenario run measured: written as a table for people and as JSON for tools.
struct ScenarioResult: Codable, Sendable {
    var scenario: String
    var parameters: [String: String]
    var sent: Int
    var acknowledged: Int
    var stream: StreamChecker.Counts
    var latency: LatencySummary
    var measuredSeconds: Double
    var deliveriesPerSecond: Double
    var serverCPUPercent: Double?
    var serverRSSKilobytes: Int?
    var clientCPUPercent: Double?
    var deliveriesPerServerCPUSecond: Double?
    var errors: [String]

    var table: String {
        func format(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "n/a" }
        var lines = ["scenario \(scenario): " + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")]
        lines.append("  sent \(sent), acknowledged \(acknowledged), delivered \(stream.delivered)")
        lines.append("  gaps \(stream.gaps), missing \(stream.missing), duplicates \(stream.duplicates), reordered \(stream.reordered)")
        lines.append("  deliveries/s \(format(deliveriesPerSecond)) over \(format(measuredSeconds)) s")
        lines.append("  latency ms: p50 \(latency.p50) p90 \(latency.p90) p99 \(latency.p99) p99.9 \(latency.p999) max \(latency.max) (n=\(latency.count))")
        lines.append("  server CPU \(format(serverCPUPercent))%, RSS \(serverRSSKilobytes.map { "\($0) KiB" } ?? "n/a"), deliveries per server CPU-s \(format(deliveriesPerServerCPUSecond))")
        lines.append("  load generator CPU \(format(clientCPUPercent))%")
        for error in errors { lines.append("  error: \(error)") }
        return lines.joined(separator: "\n")
    }

    var isClean: Bool { errors.isEmpty && stream.gaps == 0 && stream.missing == 0 && stream.duplicates == 0 && stream.reordered == 0 }
}

