/// A run's result as one self-contained HTML page (`--html FILE`): the verdict, a summary
/// table, charts (latency distribution, throughput, latency, CPU and memory over time), the
/// command line and the machine. Inline SVG and CSS only — no script, no external file — so it
/// can be attached to an issue or opened offline years later. Written as well-formed XHTML
/// syntax, which the tests parse.
struct HTMLReport {
    var result: ScenarioResult

    static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"]

    func render() -> String {
        let r = result
        var html = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8"/>
        <title>huddle-loadtest \(HTML.escape(r.scenario)) — \(HTML.escape(r.startedAt))</title>
        <style>
        body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 820px; color: #222; padding: 0 1em; }
        h1 { font-size: 1.6em; margin-bottom: 0.2em; }
        h2 { font-size: 1.15em; margin-top: 1.8em; border-bottom: 1px solid #ddd; }
        table { border-collapse: collapse; margin: 0.5em 0; }
        td, th { padding: 2px 10px 2px 0; text-align: left; vertical-align: top; }
        td.n { text-align: right; font-variant-numeric: tabular-nums; }
        pre { background: #f6f6f6; padding: 0.6em; white-space: pre-wrap; overflow-x: auto; }
        pre .word { white-space: nowrap; }
        .verdict { font-size: 0.6em; padding: 2px 8px; border-radius: 4px; vertical-align: middle; color: #fff; }
        .clean { background: #2a7d2a; }
        .unclean { background: #b22222; }
        .interrupted { background: #c46a00; }
        p.verdict-line { font-family: monospace; font-size: 1.05em; }
        svg.chart { width: 100%; height: auto; margin: 0.4em 0 1em; }
        svg .series { fill: none; stroke-width: 1.6; stroke-linejoin: round; }
        svg .grid { stroke: #e6e6e6; stroke-width: 1; }
        svg .frame { fill: none; stroke: #999; stroke-width: 1; }
        svg .window { fill: #eef4ff; }
        svg .marker { stroke: #c46a00; stroke-width: 1.5; stroke-dasharray: 5 3; }
        svg .marker-label { fill: #c46a00; font-size: 12px; }
        svg text { font: 11px Helvetica, Arial, sans-serif; fill: #444; }
        svg .chart-title { font-size: 13px; font-weight: bold; fill: #222; }
        svg .axis-label { font-size: 12px; fill: #222; }
        .note { color: #666; font-size: 0.9em; }
        </style>
        </head>
        <body>
        <h1>\(HTML.escape(r.scenario)) \(badges)</h1>
        <p class="verdict-line">verdict: \(HTML.escape(r.verdict))</p>
        \(r.interruption.map { "<p class=\"note\">\(HTML.escape(ScenarioResult.describe($0))).</p>\n" } ?? "")\
        <p class="note">Started \(HTML.escape(r.startedAt)); measured \(formatted(r.measuredSeconds)) s \
        (shaded on the time charts). \(HTML.escape(r.machine.summary))</p>

        """
        // Lines break between arguments only: a browser breaks after any hyphen, and
        // "--rate" cut into "-" and "-rate" reads as two arguments.
        let words = r.command.split(separator: " ", omittingEmptySubsequences: false).map { "<span class=\"word\">\(HTML.escape(String($0)))</span>" }
        html += section("Command", "<pre>\(words.joined(separator: " "))</pre>\n")
        html += section("Summary", summaryTable())
        html += section("Latency distribution", latencyDistribution().render()
            + "<p class=\"note\">\(HTML.escape(r.latencyMeaning)), over the measured window; the x axis is in “nines” so the tail gets the room.</p>\n")
        html += section("Throughput over time", throughputChart().render() + sentChart().render())
        html += section("Latency over time", latencyChart().render()
            + "<p class=\"note\">Percentiles of what arrived in each second.</p>\n")
        html += section("CPU over time", cpuChart().render()
            + "<p class=\"note\">Percent of one core (200 % = two cores busy). The harness's line next to the server's shows which side was the limit.</p>\n")
        html += section("Machine load over time", loadChart().render())
        if r.series.contains(where: { $0.serverRSSKilobytes != nil }) { html += section("Server memory over time", memoryChart().render()) }
        if r.series.contains(where: { $0.connections > 0 }) { html += section("Open connections over time", connectionsChart().render()) }
        html += section("Parameters", keyValueTable(r.parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
        html += section("Server", keyValueTable(serverRows()))
        html += section("Machine", keyValueTable(machineRows()))
        if !r.failures.isEmpty {
            let rows = r.failures.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, grouped($0.value)) }
            html += section("Failures by reason", keyValueTable(rows, numeric: true))
        }
        if !r.errors.isEmpty {
            html += section("Errors", "<ul>\n" + r.errors.map { "<li>\(HTML.escape($0))</li>\n" }.joined() + "</ul>\n")
        }
        return html + "</body>\n</html>\n"
    }

    // MARK: Tables

    private func section(_ title: String, _ body: String) -> String {
        "<h2>\(HTML.escape(title))</h2>\n" + body
    }

    private func summaryTable() -> String {
        let r = result
        var rows: [(String, String)] = [
            (r.sentLabel, grouped(r.sent)), ("acknowledged", grouped(r.acknowledged)), (r.deliveredLabel, grouped(r.stream.delivered)),
            ("gaps", grouped(r.stream.gaps)), ("missing", grouped(r.stream.missing)), ("duplicates", grouped(r.stream.duplicates)),
            ("reordered", grouped(r.stream.reordered)),
            ("\(r.deliveredLabel)/s", formatted(r.deliveriesPerSecond)),
            ("latency p50 / p90 / p99 / p99.9 / max (ms)", "\(r.latency.p50) / \(r.latency.p90) / \(r.latency.p99) / \(r.latency.p999) / \(r.latency.max)"),
            ("latency samples", grouped(r.latency.count)),
        ]
        for (name, summary) in r.otherLatencies.sorted(by: { $0.key < $1.key }) {
            rows.append(("\(name) p50 / p90 / p99 / p99.9 / max (ms)", "\(summary.p50) / \(summary.p90) / \(summary.p99) / \(summary.p999) / \(summary.max) (n=\(summary.count))"))
        }
        for (name, value) in r.figures.sorted(by: { $0.key < $1.key }) {
            rows.append((name.replacingUnderscores, value == value.rounded() && abs(value) < 1e15 ? grouped(Int(value)) : formatted(value, decimals: 2)))
        }
        rows += [
            ("server CPU (%)", formatted(r.serverCPUPercent)),
            ("harness CPU (%)", formatted(r.clientCPUPercent)),
            ("\(r.deliveredLabel) per server CPU-second", r.deliveriesPerServerCPUSecond.map { grouped(Int($0.rounded())) } ?? "n/a"),
            ("server RSS at the end", r.serverRSSKilobytes.map { "\(grouped($0)) KiB" } ?? "n/a"),
        ]
        return keyValueTable(rows, numeric: true)
    }

    private var badges: String {
        let quality = result.isClean ? (result.interruption == nil ? "clean" : "clean so far") : "not clean"
        var badges = "<span class=\"verdict \(result.isClean ? "clean" : "unclean")\">\(quality)</span>"
        if result.interruption != nil { badges = "<span class=\"verdict interrupted\">interrupted</span> " + badges }
        return badges
    }

    /// Only what the harness could read (ServerInfo), and where something is unknown, why.
    private func serverRows() -> [(String, String)] {
        guard let server = result.server else { return [("server", "not recorded")] }
        var rows = [("URL", server.url), ("command line", server.commandLine ?? "unknown (pass --server-pid to read it from /proc)")]
        rows += server.metricsInfo.map { ("/metrics", $0) }
        if let note = server.metricsNote { rows.append(("/metrics", note)) }
        return rows
    }

    private func machineRows() -> [(String, String)] {
        let m = result.machine
        let load = { (values: [Double]) in values.map { formatted($0, decimals: 2) }.joined(separator: " ") }
        var rows = [
            ("processors", "\(m.processors)"), ("CPU", m.cpuModel), ("memory", "\(formatted(Double(m.memoryKilobytes) / 1_048_576)) GiB"),
            ("kernel", m.kernel), ("load average at start (1, 5, 15 min)", load(m.loadAtStart)),
            ("load average at end", load(m.loadAtEnd)), ("ulimit -n (harness)", "\(m.openFilesLimit)"),
        ]
        if let server = m.serverOpenFilesLimit { rows.append(("ulimit -n (server)", "\(server)")) }
        return rows
    }

    private func keyValueTable(_ rows: [(String, String)], numeric: Bool = false) -> String {
        "<table>\n" + rows.map { "<tr><th>\(HTML.escape($0.0))</th><td\(numeric ? " class=\"n\"" : "")>\(HTML.escape($0.1))</td></tr>\n" }.joined() + "</table>\n"
    }

    // MARK: Charts

    func latencyDistribution() -> SVGLineChart {
        let points = result.latencyPercentiles.filter { $0.percentile < 100 }.map { (x: SVGLineChart.nines(percentile: $0.percentile), y: $0.milliseconds) }
        return SVGLineChart(
            title: "Latency by percentile (\(grouped(result.latency.count)) samples, max \(result.latency.max) ms)", xLabel: "percentile",
            yLabel: "ms", series: [.init(name: "latency", color: Self.colors[0], points: points)], xAxis: .nines)
    }

    func throughputChart() -> SVGLineChart {
        let series = result.series
        return SVGLineChart(
            title: "\(result.deliveredLabel.capitalizedFirst) per second", xLabel: "seconds", yLabel: "per second",
            series: [
                .init(name: "\(result.deliveredLabel)/s", color: Self.colors[2], points: Self.rates(series, \.delivered)),
                .init(name: "failed", color: Self.colors[1], points: series.map { (x: $0.t, y: Double($0.failed)) }),
            ],
            shadedX: window, maxGap: Self.sampleGap, xDomain: timeDomain, markers: markers)
    }

    /// Apart from the deliveries: in a fan-out they are a thousand times the sends, which would
    /// flatten the sends to the axis.
    func sentChart() -> SVGLineChart {
        SVGLineChart(
            title: "\(result.sentLabel.capitalizedFirst) per second", xLabel: "seconds", yLabel: "per second",
            series: [.init(name: "\(result.sentLabel)/s", color: Self.colors[0], points: Self.rates(result.series, \.sent))],
            shadedX: window, maxGap: Self.sampleGap, xDomain: timeDomain, markers: markers)
    }

    func latencyChart() -> SVGLineChart {
        let series = result.series
        func line(_ name: String, _ color: String, _ value: (SecondSample) -> Double?) -> SVGLineChart.Series {
            .init(name: name, color: color, points: series.compactMap { sample in value(sample).map { (x: sample.t, y: $0) } })
        }
        return SVGLineChart(
            title: "Latency per second", xLabel: "seconds", yLabel: "ms",
            series: [line("p50", Self.colors[0], \.latencyP50), line("p99", Self.colors[3], \.latencyP99), line("max", Self.colors[1], \.latencyMax)],
            shadedX: window, maxGap: Self.sampleGap, xDomain: timeDomain, markers: markers)
    }

    func cpuChart() -> SVGLineChart {
        let series = result.series
        func line(_ name: String, _ color: String, _ value: (SecondSample) -> Double?) -> SVGLineChart.Series {
            .init(name: name, color: color, points: series.compactMap { sample in value(sample).map { (x: sample.t, y: $0) } })
        }
        return SVGLineChart(
            title: "CPU", xLabel: "seconds", yLabel: "% of one core",
            series: [
                line("server", Self.colors[0], \.serverCPUPercent), line("harness", Self.colors[3], \.harnessCPUPercent),
            ],
            shadedX: window, maxGap: Self.sampleGap, xDomain: timeDomain, markers: markers)
    }

    /// The machine is shared: a run under load from elsewhere reads differently.
    func loadChart() -> SVGLineChart {
        SVGLineChart(
            title: "Machine load average (1 minute; \(result.machine.processors) CPUs)", xLabel: "seconds", yLabel: "runnable tasks",
            series: [.init(name: "load", color: Self.colors[4], points: result.series.compactMap { sample in sample.load1.map { (x: sample.t, y: $0) } })],
            shadedX: window, maxGap: Self.sampleGap, xDomain: timeDomain, markers: markers)
    }

    func memoryChart() -> SVGLineChart {
        SVGLineChart(
            title: "Server RSS", xLabel: "seconds", yLabel: "MiB",
            series: [.init(name: "server RSS", color: Self.colors[0], points: result.series.compactMap { sample in
                sample.serverRSSKilobytes.map { (x: sample.t, y: Double($0) / 1024) }
            })],
            shadedX: window, maxGap: Self.sampleGap, xDomain: timeDomain, markers: markers)
    }

    func connectionsChart() -> SVGLineChart {
        SVGLineChart(
            title: "Open connections", xLabel: "seconds", yLabel: "connections",
            series: [.init(name: "open", color: Self.colors[2], points: result.series.map { (x: $0.t, y: Double($0.connections)) })],
            shadedX: window, maxGap: Self.sampleGap, xDomain: timeDomain, markers: markers)
    }

    /// A rate of each sample. The last sample of a run covers what is left of its last second,
    /// often a few milliseconds: a rate over that is noise (0/s when nothing happened to fall in
    /// it, drawn as a collapse at the end of every run), so a sample under 0.2 s is left out,
    /// as its CPU is.
    static func rates(_ series: [SecondSample], _ rate: KeyPath<SecondSample, Int>) -> [(x: Double, y: Double)] {
        series.compactMap { sample in
            sample.seconds >= ProcessSample.shortestInterval ? (x: sample.t, y: Double(sample[keyPath: rate])) : nil
        }
    }

    /// The whole run, the same on every time chart.
    private var timeDomain: ClosedRange<Double>? {
        result.series.last.map { 0...max($0.t, result.interruption?.atSeconds ?? 0) }
    }

    /// Where an interrupted run was interrupted.
    private var markers: [(x: Double, label: String)] {
        result.interruption.map { [(x: $0.atSeconds, label: $0.signal)] } ?? []
    }

    /// Samples are a second apart; one further from the previous means seconds without a
    /// sample (a busy loop, or a value not measured then): the line breaks there.
    static let sampleGap = 1.5

    private var window: ClosedRange<Double>? {
        result.measureTo > result.measureFrom ? result.measureFrom...result.measureTo : nil
    }
}

/// Escaping for text and attribute values.
enum HTML {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            // XML allows no control characters but tab and newline, even escaped.
            case let c where c.asciiValue.map({ $0 < 0x20 && $0 != 0x09 && $0 != 0x0A }) == true: out += "\u{FFFD}"
            default: out.append(character)
            }
        }
        return out
    }
}

extension String {
    var replacingUnderscores: String { String(map { $0 == "_" ? " " : $0 }) }
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
