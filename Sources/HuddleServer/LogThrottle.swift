/// At most one log line per interval for an event that can repeat at traffic speed (a push
/// dropped because the webhook is down), with the count of the ones held back since the last
/// line: a dead webhook under load must not become a log line per notification. Metrics keep
/// the exact counts.
struct LogThrottle {
    let intervalMilliseconds: Int64
    private var lastLine: Int64?
    private var heldBack = 0

    init(intervalMilliseconds: Int64 = 1_000) {
        self.intervalMilliseconds = intervalMilliseconds
    }

    /// Whether to log this occurrence at `now` (monotonic milliseconds): the number of
    /// occurrences held back since the last line, or nil to stay quiet (this one is counted).
    mutating func admit(now: Int64) -> Int? {
        if let lastLine, now - lastLine < intervalMilliseconds {
            heldBack += 1
            return nil
        }
        lastLine = now
        defer { heldBack = 0 }
        return heldBack
    }
}
