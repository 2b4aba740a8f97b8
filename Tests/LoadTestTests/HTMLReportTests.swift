import ChildProcessExit
import Foundation
import FoundationXML
import Testing

@testable import huddle_loadtest

/// The report must be one well-formed, self-contained file that shows the run's own numbers.
@Suite(.ownThread) struct HTMLReportTests {
    static func sampleResult(errors: [String] = []) -> ScenarioResult {
        var latency = LatencyRecorder()
        for microseconds in 1...10_000 { latency.record(microseconds: UInt64(microseconds)) }
        let series = (1...12).map { second in
            SecondSample(
                t: Double(second), phase: second <= 2 ? "warmup" : second <= 10 ? "measure" : "drain",
                sent: 1000, delivered: 1_000_000 + second, failed: second == 5 ? 3 : 0, connections: 1001,
                latencyP50: 1.5 + Double(second), latencyP99: 9.25 + Double(second), latencyMax: 20,
                serverCPUPercent: 90 + Double(second), serverRSSKilobytes: 50_000 + second, harnessCPUPercent: 40, load1: 3.5)
        }
        return ScenarioResult(
            scenario: "fanout", parameters: ["subscribers": "1000", "rate": "1000.0"],
            command: "huddle-loadtest fanout --subscribers 1000 --label '<b>&\"x\"</b>'", startedAt: "2026-11-21T12:00:00Z",
            machine: MachineInfo(
                processors: 2, memoryKilobytes: 24_000_000, cpuModel: "Test CPU <2 GHz>", kernel: "Linux 6.1 x86_64",
                loadAtStart: [1, 2, 3], loadAtEnd: [3, 2, 1], openFilesLimit: 65536, serverOpenFilesLimit: 1024),
            latencyMeaning: "publish → delivery", sent: 8000, acknowledged: 8000, sentLabel: "sent", deliveredLabel: "delivered",
            stream: .init(delivered: 8_000_000, gaps: 1, missing: 2, duplicates: 3, reordered: 4),
            latency: latency.summary, latencyPercentiles: latency.curve, measuredSeconds: 8, deliveriesPerSecond: 1_000_000,
            serverCPUPercent: 95, serverRSSKilobytes: 50_012, clientCPUPercent: 40, deliveriesPerServerCPUSecond: 1_052_631,
            figures: ["publishes_per_second_asked": 1000], failures: ["refused\u{1}": 3], otherLatencies: ["reconnect": latency.summary],
            series: series, measureFrom: 2, measureTo: 10, errors: errors)
    }

    /// Parses the page as XML: every element closed, every attribute quoted, every `&` an entity.
    private func parse(_ html: String) -> (ok: Bool, error: String, elements: [String: Int], attributes: [(String, [String: String])]) {
        let delegate = Collector()
        let parser = XMLParser(data: Data(html.utf8))
        parser.delegate = delegate
        let ok = parser.parse()
        return (ok, parser.parserError.map { "\($0)" } ?? "", delegate.elements, delegate.attributes)
    }

    @Test func isWellFormed() {
        let page = HTMLReport(result: Self.sampleResult(errors: ["a <bad> & \"quoted\" error"])).render()
        let parsed = parse(page)
        #expect(parsed.ok, "\(parsed.error)")
        #expect(parsed.elements["html"] == 1)
        #expect(parsed.elements["svg", default: 0] >= 7)
        #expect(parsed.elements["li"] == 1)
    }

    @Test func isSelfContained() {
        let page = HTMLReport(result: Self.sampleResult()).render()
        for forbidden in ["<script", "src=", "href=", "http:", "https:", "@import", "url("] {
            #expect(!page.contains(forbidden), "\(forbidden)")
        }
    }

    @Test func chartsCarryEverySecondOfTheSeries() {
        let result = Self.sampleResult()
        let parsed = parse(HTMLReport(result: result).render())
        let polylines = parsed.attributes.filter { $0.0 == "polyline" }.map(\.1)
        func points(_ series: String) -> [[String]] {
            polylines.filter { $0["data-series"] == series }.map { $0["points", default: ""].split(separator: " ").map(String.init) }
        }
        #expect(points("delivered/s").first?.count == result.series.count)
        #expect(points("sent/s").first?.count == result.series.count)
        #expect(points("p99").first?.count == result.series.count)
        #expect(points("server").first?.count == result.series.count)
        #expect(points("harness").first?.count == result.series.count)
        #expect(points("server RSS").first?.count == result.series.count)
        // The percentile curve: every point below 100 % (100 % is infinitely far on a nines axis).
        #expect(points("latency").first?.count == result.latencyPercentiles.filter { $0.percentile < 100 }.count)
        // The measured window is shaded on the time charts.
        #expect(parsed.attributes.contains { $0.0 == "rect" && $0.1["class"] == "window" })
    }

    @Test func showsTheRunsOwnFiguresAndEscapesText() {
        let page = HTMLReport(result: Self.sampleResult()).render()
        #expect(page.contains("1,052,631"))  // deliveries per server CPU-second
        #expect(page.contains("8,000,000"))
        #expect(page.contains("Test CPU &lt;2 GHz&gt;"))
        #expect(page.contains("--label</span> <span class=\"word\">&#39;&lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;&#39;"))
        #expect(page.contains("not clean"))  // gaps and duplicates in the sample
        #expect(page.contains("refused\u{FFFD}"))  // a control character cannot appear in XML
    }

    /// The last sample of a run covers a moment: its rate (0/s when nothing fell in it) was
    /// drawn as a collapse at the end of every run. A late sample's rate is over its seconds.
    @Test func aMomentTooShortForARateIsLeftOut() {
        var result = Self.sampleResult()
        result.series[6].seconds = 3
        result.series[11].seconds = 0.05
        result.series[11].sent = 0
        let sent = HTMLReport.rates(result.series, \.sent)
        #expect(sent.count == result.series.count - 1, "the last moment is too short for a rate")
        #expect(sent.allSatisfy { $0.y == 1000 }, "\(sent)")
        let parsed = parse(HTMLReport(result: result).render())
        let polyline = parsed.attributes.first { $0.0 == "polyline" && $0.1["data-series"] == "sent/s" }
        #expect(polyline?.1["points"]?.split(separator: " ").count == result.series.count - 1)
    }

    /// The x tick labels of a chart (the y ones are anchored at their end).
    private func xTickLabels(_ chart: SVGLineChart) -> [String] {
        let svg = chart.render()
        let pattern = try! Regex(#"<text class="axis" [^>]*text-anchor="middle">([^<]*)</text>"#)
        return svg.matches(of: pattern).map { String($0.output[1].substring ?? "") }
    }

    @Test func timeChartsShareTheRunsRange() {
        var result = Self.sampleResult()
        for index in 8..<12 { result.series[index].latencyP50 = nil; result.series[index].latencyP99 = nil; result.series[index].latencyMax = nil }
        let report = HTMLReport(result: result)
        let ticks = xTickLabels(report.throughputChart())
        #expect((Double(ticks.last ?? "") ?? 0) >= 12, "the run's last second is on the axis: \(ticks)")
        for chart in [report.sentChart(), report.latencyChart(), report.cpuChart(), report.loadChart(), report.memoryChart(), report.connectionsChart()] {
            #expect(xTickLabels(chart) == ticks, "\(chart.title)")
        }
    }

    @Test func anInterruptionIsMarkedOnEveryTimeChart() {
        var result = Self.sampleResult()
        result.interruption = Interruption(signal: "SIGINT", phase: "measure", atSeconds: 7.5)
        let parsed = parse(HTMLReport(result: result).render())
        #expect(parsed.ok, "\(parsed.error)")
        let markers = parsed.attributes.filter { $0.0 == "line" && $0.1["class"] == "marker" }
        #expect(markers.count == 7, "throughput, sent, latency, CPU, load, memory, connections")
        #expect(Set(markers.map { $0.1["x1"] }).count == 1, "the same second on each")
        #expect(HTMLReport(result: Self.sampleResult()).render().contains("class=\"marker\"") == false)
    }

    /// A browser breaks a line after any hyphen: "--rate" must not become "-" and "-rate".
    @Test func theCommandBreaksBetweenArgumentsOnly() {
        let page = HTMLReport(result: Self.sampleResult()).render()
        #expect(page.contains("<pre><span class=\"word\">huddle-loadtest</span> <span class=\"word\">fanout</span> <span class=\"word\">--subscribers</span>"))
        #expect(page.contains("pre .word { white-space: nowrap; }"))
    }

    @Test func anEmptyRunStillRenders() {
        var result = Self.sampleResult()
        result.series = []
        result.latencyPercentiles = []
        let parsed = parse(HTMLReport(result: result).render())
        #expect(parsed.ok, "\(parsed.error)")
    }
}

/// The last line on stdout, and the exit status that goes with it.
@Suite(.ownThread) struct VerdictTests {
    @Test func namesEveryProblemWithItsCount() {
        var result = HTMLReportTests.sampleResult(errors: ["boom"])
        result.errorCount = 12
        #expect(result.verdict == "not clean: 1 gap, 2 missing, 3 duplicates, 4 reordered, 12 errors")
        #expect(result.exitStatus == 2)
        result.stream = .init(delivered: 10)
        result.errors = []
        result.errorCount = 0
        #expect(result.verdict == "clean")
        #expect(result.exitStatus == 0)
    }

    @Test func anInterruptedRunIsNeverAPass() {
        var result = HTMLReportTests.sampleResult()
        result.interruption = Interruption(signal: "SIGINT", phase: "measure", atSeconds: 4.5)
        #expect(result.verdict == "interrupted (SIGINT during measure); not clean: 1 gap, 2 missing, 3 duplicates, 4 reordered")
        #expect(result.exitStatus == 130)
        result.stream = .init(delivered: 10)
        #expect(result.verdict == "interrupted (SIGINT during measure); clean so far")
        #expect(result.exitStatus == 130)
        result.interruption?.signal = "SIGTERM"
        #expect(result.exitStatus == 143)
        let page = HTMLReport(result: result).render()
        #expect(page.contains("verdict interrupted"))
        #expect(page.contains("interrupted by SIGTERM during measure, 4.5 s into the run"))
    }
}

/// The server's side of the report: only what the harness could read.
@Suite(.ownThread) struct ServerInfoTests {
    @Test func keepsOnlyInfoMetrics() {
        let metrics = """
        # HELP huddle_build_info Build.
        # TYPE huddle_build_info gauge
        huddle_build_info{version="1.2.0",commit="abc"} 1
        huddle_connections{state="websocket"} 3
        process_info 1
        huddle_information_total 4
        """
        #expect(ServerInfo.infoLines(metrics) == ["huddle_build_info{version=\"1.2.0\",commit=\"abc\"} 1", "process_info 1"])
    }

    @Test func theReportShowsTheServer() {
        var result = HTMLReportTests.sampleResult()
        result.server = ServerInfo(
            url: "ws://127.0.0.1:9000/v1", commandLine: "huddle --data-dir /tmp/x --kdf-iterations 1000", metricsInfo: [],
            metricsNote: "/metrics has no …_info metric")
        let page = HTMLReport(result: result).render()
        #expect(page.contains("ws://127.0.0.1:9000/v1"))
        #expect(page.contains("huddle --data-dir /tmp/x --kdf-iterations 1000"))
        #expect(page.contains("/metrics has no …_info metric"))
        #expect(result.table.contains("server command: huddle --data-dir /tmp/x --kdf-iterations 1000"))
    }
}

private final class Collector: NSObject, XMLParserDelegate {
    var elements: [String: Int] = [:]
    var attributes: [(String, [String: String])] = []

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String]) {
        elements[name, default: 0] += 1
        self.attributes.append((name, attributes))
    }
}

/// Axis arithmetic of the charts.
@Suite(.ownThread) struct SVGLineChartTests {
    @Test func ticksAreRoundAndCoverTheRange() {
        #expect(SVGLineChart.niceTicks(min: 0, max: 97) == [0, 20, 40, 60, 80, 100])
        #expect(SVGLineChart.niceTicks(min: 0, max: 1_000_000) == [0, 200_000, 400_000, 600_000, 800_000, 1_000_000])
        let small = SVGLineChart.niceTicks(min: 0, max: 0.7)
        #expect(small.count == 5 && zip(small, [0, 0.2, 0.4, 0.6, 0.8]).allSatisfy { abs($0 - $1) < 1e-9 }, "\(small)")
        #expect(SVGLineChart.niceTicks(min: 5, max: 5) == [5, 6])
    }

    @Test func ninesAxis() {
        #expect(abs(SVGLineChart.nines(percentile: 90) - 1) < 1e-9)
        #expect(abs(SVGLineChart.nines(percentile: 99.9) - 3) < 1e-9)
        #expect(SVGLineChart.nines(percentile: 100).isFinite)
        #expect((0...4).map { SVGLineChart.percentileLabel(nines: Double($0)) } == ["0%", "90%", "99%", "99.9%", "99.99%"])
    }

    /// A missing second is a break in the line, not a straight stroke across it; a sample
    /// with no neighbour is drawn as a dot.
    @Test func linesBreakAcrossMissingSamples() {
        let points: [(x: Double, y: Double)] = [(1, 5), (2, 6), (5, 9), (8, 1), (9, 2), (10, 3)]
        #expect(SVGLineChart.runs(points, maxGap: 1.5).map { $0.map(\.x) } == [[1, 2], [5], [8, 9, 10]])
        #expect(SVGLineChart.runs(points, maxGap: nil).count == 1)
        let svg = SVGLineChart(
            title: "t", xLabel: "s", yLabel: "v", series: [.init(name: "v", color: "#000", points: points)], maxGap: 1.5).render()
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2)
        #expect(svg.components(separatedBy: "<circle").count - 1 == 1)
    }

    @Test func reportChartsBreakWhereTheSeriesHasNoSample() {
        var result = HTMLReportTests.sampleResult()
        result.series.remove(at: 5)  // second 6 has no sample (t 5 → 7)
        result.series[3].latencyP99 = nil  // nothing arrived in second 4
        let page = HTMLReport(result: result).render()
        #expect(page.contains("<polyline class=\"series\" data-series=\"sent/s\""))
        #expect(page.components(separatedBy: "data-series=\"sent/s\"").count - 1 == 2)  // 1–5, 7–12
        #expect(page.components(separatedBy: "data-series=\"p99\"").count - 1 == 3)  // 1–3, 5, 7–12
    }

    @Test func labels() {
        #expect(SVGLineChart.label(0) == "0")
        #expect(SVGLineChart.label(2.5) == "2.5")
        #expect(SVGLineChart.label(40_000) == "40k")
        #expect(SVGLineChart.label(1_200_000) == "1.2M")
    }
}
