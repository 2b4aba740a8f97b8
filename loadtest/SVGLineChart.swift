import Foundation

/// A line chart as inline SVG text: axes with round-number ticks, one polyline per series, a
/// legend, and optionally a shaded x range (the measured window). Drawn here rather than by a
/// charting library so the report is one self-contained file that opens anywhere, offline.
struct SVGLineChart {
    struct Series {
        var name: String
        /// A CSS colour.
        var color: String
        var points: [(x: Double, y: Double)]
    }

    /// How x values become tick labels: plain numbers, or "nines" (x = −log10(1 − p)) shown
    /// as percentiles, for latency distributions whose interesting part is the tail.
    enum XAxis {
        case linear
        case nines
    }

    var title: String
    var xLabel: String
    var yLabel: String
    var series: [Series]
    var xAxis = XAxis.linear
    var shadedX: ClosedRange<Double>?
    /// Consecutive points further apart in x than this are not joined: a missing sample is a
    /// break in the line, not a straight stroke across it. nil joins every point.
    var maxGap: Double?
    /// The x range to show at least, whatever the points cover: a report's time charts share
    /// the run's, so the same second sits at the same place on each.
    var xDomain: ClosedRange<Double>?
    /// Vertical lines at moments of the run (the Ctrl-C of an interrupted one), labelled.
    var markers: [(x: Double, label: String)] = []

    static let width = 760.0
    static let height = 300.0
    private static let left = 64.0
    private static let right = 40.0
    private static let top = 32.0
    private static let bottom = 46.0

    func render() -> String {
        let all = series.flatMap(\.points).filter { $0.x.isFinite && $0.y.isFinite }
        var svg = "<svg class=\"chart\" viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" role=\"img\" aria-label=\"\(HTML.escape(title))\">\n"
        svg += "<title>\(HTML.escape(title))</title>\n"
        svg += text(x: Self.left, y: 20, title, anchor: "start", className: "chart-title")
        guard !all.isEmpty else {
            svg += text(x: Self.width / 2, y: Self.height / 2, "no data", anchor: "middle", className: "axis")
            return svg + "</svg>\n"
        }
        let xTicks: [Double]
        switch xAxis {
        case .linear:
            let xs = all.map(\.x) + (xDomain.map { [$0.lowerBound, $0.upperBound] } ?? [])
            xTicks = Self.niceTicks(min: xs.min()!, max: xs.max()!)
        case .nines: xTicks = Array(0...max(1, Int(all.map(\.x).max()!.rounded(.up)))).map(Double.init)
        }
        let yTicks = Self.niceTicks(min: 0, max: all.map(\.y).max()!)
        let xRange = xTicks.first!...max(xTicks.last!, xTicks.first! + 1)
        let yRange = 0...max(yTicks.last!, 1e-9)
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        func px(_ x: Double) -> Double { Self.left + (x - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * plotWidth }
        func py(_ y: Double) -> Double { Self.top + plotHeight - (y - yRange.lowerBound) / (yRange.upperBound - yRange.lowerBound) * plotHeight }

        if let shaded = shadedX, shaded.upperBound > shaded.lowerBound {
            let from = px(Swift.max(shaded.lowerBound, xRange.lowerBound)), to = px(Swift.min(shaded.upperBound, xRange.upperBound))
            if to > from {
                svg += "<rect class=\"window\" x=\"\(Self.number(from))\" y=\"\(Self.number(Self.top))\" width=\"\(Self.number(to - from))\" height=\"\(Self.number(plotHeight))\"/>\n"
            }
        }
        for tick in yTicks {
            let y = py(tick)
            svg += "<line class=\"grid\" x1=\"\(Self.number(Self.left))\" y1=\"\(Self.number(y))\" x2=\"\(Self.number(Self.width - Self.right))\" y2=\"\(Self.number(y))\"/>\n"
            svg += text(x: Self.left - 6, y: y + 4, Self.label(tick), anchor: "end", className: "axis")
        }
        for tick in xTicks {
            let x = px(tick)
            svg += "<line class=\"grid\" x1=\"\(Self.number(x))\" y1=\"\(Self.number(Self.top))\" x2=\"\(Self.number(x))\" y2=\"\(Self.number(Self.top + plotHeight))\"/>\n"
            let label = xAxis == .nines ? Self.percentileLabel(nines: tick) : Self.label(tick)
            svg += text(x: x, y: Self.top + plotHeight + 16, label, anchor: "middle", className: "axis")
        }
        for marker in markers where xRange.contains(marker.x) {
            let x = Self.number(px(marker.x))
            svg += "<line class=\"marker\" x1=\"\(x)\" y1=\"\(Self.number(Self.top))\" x2=\"\(x)\" y2=\"\(Self.number(Self.top + plotHeight))\"/>\n"
            svg += text(x: px(marker.x) - 4, y: Self.top + 14, marker.label, anchor: "end", className: "marker-label")
        }
        svg += "<rect class=\"frame\" x=\"\(Self.number(Self.left))\" y=\"\(Self.number(Self.top))\" width=\"\(Self.number(plotWidth))\" height=\"\(Self.number(plotHeight))\"/>\n"
        svg += text(x: Self.left + plotWidth / 2, y: Self.height - 8, xLabel, anchor: "middle", className: "axis-label")
        svg += "<text class=\"axis-label\" text-anchor=\"middle\" transform=\"translate(14 \(Self.number(Self.top + plotHeight / 2))) rotate(-90)\">\(HTML.escape(yLabel))</text>\n"

        var legendX = Self.width - Self.right
        for series in series.reversed() {
            legendX -= Double(series.name.count) * 7 + 28
            svg += "<rect x=\"\(Self.number(legendX))\" y=\"12\" width=\"12\" height=\"4\" fill=\"\(HTML.escape(series.color))\"/>\n"
            svg += text(x: legendX + 16, y: 18, series.name, anchor: "start", className: "legend")
        }
        for series in series {
            let name = HTML.escape(series.name), color = HTML.escape(series.color)
            for run in Self.runs(series.points.filter { $0.x.isFinite && $0.y.isFinite }, maxGap: maxGap) {
                if run.count == 1 {
                    // A sample with no neighbour to join: a dot, or it would not show at all.
                    svg += "<circle class=\"point\" data-series=\"\(name)\" fill=\"\(color)\" r=\"2\" cx=\"\(Self.number(px(run[0].x)))\" cy=\"\(Self.number(py(run[0].y)))\"/>\n"
                } else {
                    let coordinates = run.map { "\(Self.number(px($0.x))),\(Self.number(py($0.y)))" }.joined(separator: " ")
                    svg += "<polyline class=\"series\" data-series=\"\(name)\" stroke=\"\(color)\" points=\"\(coordinates)\"/>\n"
                }
            }
        }
        return svg + "</svg>\n"
    }

    /// `points` cut where consecutive x values are more than `maxGap` apart.
    static func runs(_ points: [(x: Double, y: Double)], maxGap: Double?) -> [[(x: Double, y: Double)]] {
        var runs: [[(x: Double, y: Double)]] = []
        for point in points {
            if let previous = runs.last?.last, maxGap.map({ point.x - previous.x <= $0 }) ?? true {
                runs[runs.count - 1].append(point)
            } else {
                runs.append([point])
            }
        }
        return runs
    }

    private func text(x: Double, y: Double, _ content: String, anchor: String, className: String) -> String {
        "<text class=\"\(className)\" x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" text-anchor=\"\(anchor)\">\(HTML.escape(content))</text>\n"
    }

    // MARK: Ticks and numbers

    /// About five ticks at 1, 2 or 5 × 10^k, from at or below `min` to at or above `max`.
    static func niceTicks(min: Double, max: Double) -> [Double] {
        let span = max - min
        guard span > 0, span.isFinite else { return [min, min + 1] }
        let raw = span / 5
        let magnitude = pow(10, Foundation.log10(raw).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
        let first = (min / step).rounded(.down) * step
        var ticks: [Double] = []
        var tick = first
        while tick < max + step * 0.999 && ticks.count < 50 {
            ticks.append(tick)
            tick = first + Double(ticks.count) * step
        }
        if ticks.count < 2 { ticks.append(first + step) }
        return ticks
    }

    /// 0 → "0%", 1 → "90%", 2 → "99%", 3 → "99.9%".
    static func percentileLabel(nines: Double) -> String {
        let n = Int(nines.rounded())
        if n == 0 { return "0%" }
        if n == 1 { return "90%" }
        return "99" + (n > 2 ? "." + String(repeating: "9", count: n - 2) : "") + "%"
    }

    /// A percentile (0–100) on the nines axis; 100 itself, infinitely far, is left to the caller.
    static func nines(percentile: Double) -> Double {
        -Foundation.log10(1 - Swift.min(percentile, 99.999_999_9) / 100)
    }

    /// Tick labels: no trailing zeros, thousands as k and millions as M.
    static func label(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1_000_000 { return trimmed(value / 1_000_000) + "M" }
        if magnitude >= 10_000 { return trimmed(value / 1_000) + "k" }
        return trimmed(value)
    }

    private static func trimmed(_ value: Double) -> String {
        var text = formatted(value, decimals: abs(value) < 10 ? 3 : 1)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }

    /// Coordinates with one decimal: enough for a 760-pixel chart, and the file stays small.
    static func number(_ value: Double) -> String { formatted(value, decimals: 1) }
}
