/// One second of a run, for the time series in the JSON result and the report's charts:
/// what went out and came in during that second, the latency of what arrived in it, and what
/// the server and the harness cost meanwhile.
struct SecondSample: Codable, Sendable, Equatable {
    /// Seconds since the run started (the end of this sample's second).
    var t: Double
    /// `setup`, `warmup`, `measure` or `drain`.
    var phase: String
    /// Messages (or connection attempts) sent per second over the time the sample covers.
    var sent: Int
    /// Messages delivered (or connections opened) per second over the time the sample covers.
    var delivered: Int
    /// Failures during the second (refused publishes, failed connections, lost connections).
    var failed: Int
    /// Open connections at the end of the second.
    var connections: Int
    /// Latency of what arrived during the second, in milliseconds; nil when nothing arrived.
    var latencyP50: Double?
    var latencyP99: Double?
    var latencyMax: Double?
    /// CPU used during the second, in percent of one core (200 = two cores busy).
    var serverCPUPercent: Double?
    var serverRSSKilobytes: Int?
    var harnessCPUPercent: Double?
    /// The machine's one-minute load average: the machine is shared, so every figure needs it.
    var load1: Double?
    /// The wall time the sample covers: about 1, less for the last of a run, more when the
    /// harness's loop was too busy to take it on time (charts break their lines there).
    var seconds: Double = 1
}
