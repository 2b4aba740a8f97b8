/// What one scenario run measured: written as a table for people, as JSON for tools and as an
/// HTML report with charts.
struct ScenarioResult: Codable, Sendable {
    var scenario: String
    var parameters: [String: String]
    /// The harness's command line, so a figure can be reproduced.
    var command: String
    /// UTC, ISO 8601.
    var startedAt: String
    var machine: MachineInfo
    /// What `latency` times, e.g. "publish → delivery, from the intended send time".
    var latencyMeaning: String
    var sent: Int
    var acknowledged: Int
    /// What `sent` and `delivered` count in this scenario ("sent"/"delivered", or
    /// "attempted"/"opened" for connections), for the report's charts.
    var sentLabel: String
    var deliveredLabel: String
    var stream: StreamChecker.Counts
    /// Over the measured window (warm-up and drain left out).
    var latency: LatencySummary
    /// The whole distribution behind `latency`.
    var latencyPercentiles: [PercentilePoint]
    var measuredSeconds: Double
    var deliveriesPerSecond: Double
    var serverCPUPercent: Double?
    var serverRSSKilobytes: Int?
    var clientCPUPercent: Double?
    var deliveriesPerServerCPUSecond: Double?
    /// Figures particular to the scenario (`connections_per_second`, `recovered_true`, …).
    var figures: [String: Double]
    /// Failures counted by reason (refused connections, refused publishes, closes).
    var failures: [String: Int]
    /// Other timed things of the scenario (`connect`, `reconnect`), in milliseconds.
    var otherLatencies: [String: LatencySummary]
    /// One sample per second of the whole run, set-up included.
    var series: [SecondSample]
    /// The measured window, in seconds since the run started (the time axis of `series`).
    var measureFrom: Double
    var measureTo: Double
    var errors: [String]
    /// Every error of the run; `errors` keeps only the first ones.
    var errorCount = 0
    /// Set when Ctrl-C (or SIGTERM) cut the run short: the figures cover what was measured so far.
    var interruption: Interruption?
    /// What the harness knows of the server: its URL, flags and published info.
    var server: ServerInfo?

    var table: String {
        var lines = ["scenario \(scenario): " + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")]
        if let interruption { lines.append("  " + Self.describe(interruption)) }
        lines.append("  \(sentLabel) \(sent), acknowledged \(acknowledged), \(deliveredLabel) \(stream.delivered)")
        lines.append("  gaps \(stream.gaps), missing \(stream.missing), duplicates \(stream.duplicates), reordered \(stream.reordered)")
        lines.append("  \(deliveredLabel)/s \(formatted(deliveriesPerSecond)) over \(formatted(measuredSeconds)) s")
        lines.append("  latency ms (\(latencyMeaning)): \(Self.describe(latency))")
        for (name, summary) in otherLatencies.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(name) ms: \(Self.describe(summary))")
        }
        for (name, value) in figures.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(name): \(value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : formatted(value, decimals: 2))")
        }
        for (reason, count) in failures.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            lines.append("  failed \(count)×: \(reason)")
        }
        lines.append("  server CPU \(formatted(serverCPUPercent))%, RSS \(serverRSSKilobytes.map { "\($0) KiB" } ?? "n/a"), \(deliveredLabel) per server CPU-s \(formatted(deliveriesPerServerCPUSecond))")
        lines.append("  load generator CPU \(formatted(clientCPUPercent))%")
        lines.append("  machine: \(machine.summary)")
        if let server {
            lines.append("  server: \(server.url)")
            if let command = server.commandLine { lines.append("  server command: \(command)") }
            for line in server.metricsInfo { lines.append("  server info: \(line)") }
        }
        for error in errors { lines.append("  error: \(error)") }
        return lines.joined(separator: "\n")
    }

    static func describe(_ interruption: Interruption) -> String {
        "interrupted by \(interruption.signal) during \(interruption.phase), \(formatted(interruption.atSeconds)) s into the run: "
            + "the figures cover what was measured until then"
    }

    static func describe(_ summary: LatencySummary) -> String {
        "p50 \(summary.p50) p90 \(summary.p90) p99 \(summary.p99) p99.9 \(summary.p999) max \(summary.max) (n=\(summary.count))"
    }

    /// Nothing lost, duplicated, reordered or refused. Failures are counted by reason and do not
    /// by themselves make a run unclean (a `connect` run past the server's limits is expected
    /// to see refusals); a scenario that cannot tolerate one reports it as an error.
    var isClean: Bool { problems.isEmpty }

    /// What makes the run not clean, counted: "3 gaps", "1 duplicate", "12 errors".
    var problems: [String] {
        var problems: [String] = []
        func add(_ count: Int, _ one: String, _ many: String) {
            if count > 0 { problems.append("\(grouped(count)) \(count == 1 ? one : many)") }
        }
        add(stream.gaps, "gap", "gaps")
        add(stream.missing, "missing", "missing")
        add(stream.duplicates, "duplicate", "duplicates")
        add(stream.reordered, "reordered", "reordered")
        add(max(errorCount, errors.count), "error", "errors")
        return problems
    }

    /// The last line on stdout: "clean", "not clean: 3 gaps, 1 duplicate", or for a run cut
    /// short "interrupted (SIGINT during measure); clean so far" / "…; not clean: …".
    var verdict: String {
        let quality = isClean ? "clean" : "not clean: " + problems.joined(separator: ", ")
        guard let interruption else { return quality }
        return "interrupted (\(interruption.signal) during \(interruption.phase)); " + (isClean ? "clean so far" : quality)
    }

    /// 0 clean, 2 not clean, 128 + the signal's number when interrupted (130 for Ctrl-C),
    /// whatever the figures: a partial run is never a pass.
    var exitStatus: Int32 { interruption?.exitStatus ?? (isClean ? 0 : 2) }
}
