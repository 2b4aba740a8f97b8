import Histogram

/// Latencies in microseconds in an HdrHistogram (3 significant digits, up to 100 s), so
/// percentiles stay exact at the tail where averages lie.
struct LatencyRecorder {
    private(set) var histogram = Histogram<UInt64>(highestTrackableValue: 100_000_000, numberOfSignificantValueDigits: .three)

    mutating func record(microseconds: UInt64) {
        _ = histogram.record(min(microseconds, 100_000_000))
    }

    var count: UInt64 { histogram.totalCount }

    func percentile(_ p: Double) -> Double { Double(histogram.valueAtPercentile(p)) / 1000 }  // milliseconds

    var summary: LatencySummary {
        LatencySummary(
            count: Int(count), p50: percentile(50), p90: percentile(90), p99: percentile(99), p999: percentile(99.9),
            max: Double(histogram.max) / 1000, mean: histogram.mean / 1000)
    }
}

/// Milliseconds.
struct LatencySummary: Codable, Sendable {
    var count: Int
    var p50: Double
    var p90: Double
    var p99: Double
    var p999: Double
    var max: Double
    var mean: Double
}
