import HuddleIO
import Logging

/// The info-level line an operator reads to see the server is alive and how busy it is
/// (`--summary-interval`): connections, users online, messages per second in and out since the
/// last line, the log position, and what was refused since the last line, by kind
/// (`RefusalCounts`: only the kinds that happened). Counters come from `ServerMetrics`; rates
/// and refusals are differences between two lines, so the first line covers the time since
/// start-up.
struct ActivitySummary {
    private let metrics: ServerMetrics
    private var last: ServerMetrics.Traffic
    private var lastAt: Int64

    init(metrics: ServerMetrics) {
        self.metrics = metrics
        last = metrics.traffic()
        lastAt = MonotonicClock.milliseconds()
    }

    mutating func log(usersOnline: Int, logPosition: UInt64, to logger: Logger) {
        let now = MonotonicClock.milliseconds()
        let traffic = metrics.traffic()
        let seconds = max(Double(now - lastAt) / 1000, 0.001)
        func rate(_ count: Int) -> String { String(Int((Double(count) / seconds).rounded())) }
        let refused = traffic.refusals.since(last.refusals)
        logger.info("activity", metadata: refused.metadata.merging([
            "connections": "\(traffic.openConnections)",
            "websockets": "\(traffic.openWebSockets)",
            "users_online": "\(usersOnline)",
            "messages_in_per_s": "\(rate(traffic.messagesReceived - last.messagesReceived))",
            "messages_out_per_s": "\(rate(traffic.messagesSent - last.messagesSent))",
            "refusals": "\(refused.total)",
            "log_position": "\(logPosition)",
        ]) { $1 })
        last = traffic
        lastAt = now
    }
}
