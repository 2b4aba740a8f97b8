import Histogram

/// Latencies in microseconds in an HdrHistogram (3 significant digits, up to 100 s), so
/// percentiles stay exact at the tail where averages lie.
struct LatencyRecorder {
    private(set) var histogram = Histogram<UInt64>(highestTrackableValue: 100_000_000, numberOfSignificantValueDigits: .three)

    mutating func record(microseconds: UInt64) {
        _ = histogram.record(min(microseconds, 100_000_000))
    }

    /// The time from `start` to `end` (monotonic nanoseconds); an end before the start (a
    /// message stamped in the future) counts as zero.
    mutating func record(from start: UInt64, to end: UInt64) {
        record(microseconds: end > start ? (end - start) / 1000 : 0)
    }

    mutating func reset() { histogram.reset() }

    var count: UInt64 { histogram.totalCount }

    func percentile(_ p: Double) -> Double { Double(histogram.valueAtPercentile(p)) / 1000 }  // milliseconds

    var summary: LatencySummary {
        LatencySummary(
            count: Int(count), p50: percentile(50), p90: percentile(90), p99: percentile(99), p999: percentile(99.9),
            max: Double(histogram.max) / 1000, mean: count == 0 ? 0 : histogram.mean / 1000)
    }

    /// The whole distribution as HdrHistogram prints it (five steps per halving of the distance
    /// to 100 %), for the report's percentile curve.
    var curve: [PercentilePoint] {
        guard count > 0 else { return [] }
        var points: [PercentilePoint] = []
        for step in histogram.percentiles(ticksPerHalfDistance: 5) {
            let point = PercentilePoint(percentile: step.percentileLevelIteratedTo, milliseconds: Double(step.value) / 1000)
            if points.last?.percentile != point.percentile { points.append(point) }
        }
        return points
    }
}

/// Milliseconds.
struct LatencySummary: Codable, Sendable, Equatable {
    var count: Int
    var p50: Double
    var p90: Double
    var p99: Double
    var p999: Double
    var max: Double
    var mean: Double
}

/// One point of a latency distribution: `percentile` % of the values were at most `milliseconds`.
struct PercentilePoint: Codable, Sendable, Equatable {
    var percentile: Double
    var milliseconds: Double
}
