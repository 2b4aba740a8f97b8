/// When a `HuddleClient` tries again after its connection dropped: exponential backoff with
/// jitter, so that thousands of phones cut off by the same server restart do not all come back
/// in the same millisecond.
public struct ReconnectPolicy: Sendable, Equatable {
    /// The ceiling of the first retry's delay; each later attempt doubles it.
    public var initialDelayMilliseconds: Int64 = 250
    /// The largest ceiling.
    public var maxDelayMilliseconds: Int64 = 30_000
    /// How much of the ceiling is random: 1 is "full jitter" (anywhere between 0 and the
    /// ceiling), 0 waits exactly the ceiling.
    public var jitter: Double = 1
    /// Failed attempts in a row after which the client stops; nil retries forever. An attempt
    /// fails when it ends before the connection was signed in and ready; with several server
    /// URLs each one tried counts.
    public var maxAttempts: Int?

    public init(initialDelayMilliseconds: Int64 = 250, maxDelayMilliseconds: Int64 = 30_000, jitter: Double = 1, maxAttempts: Int? = nil) {
        self.initialDelayMilliseconds = max(0, initialDelayMilliseconds)
        self.maxDelayMilliseconds = max(self.initialDelayMilliseconds, maxDelayMilliseconds)
        self.jitter = min(max(jitter, 0), 1)
        self.maxAttempts = maxAttempts
    }

    /// The ceiling for `attempt` (1 for the first retry): the initial delay doubled
    /// `attempt - 1` times, at most `maxDelayMilliseconds`.
    public func ceiling(attempt: Int) -> Int64 {
        var ceiling = initialDelayMilliseconds
        var doublings = max(attempt, 1) - 1
        while doublings > 0 && ceiling < maxDelayMilliseconds {
            ceiling = ceiling > maxDelayMilliseconds / 2 ? maxDelayMilliseconds : ceiling * 2
            doublings -= 1
        }
        return min(ceiling, maxDelayMilliseconds)
    }

    /// The delay before `attempt`, given `random` uniform in 0..<1.
    public func delay(attempt: Int, random: Double) -> Int64 {
        let ceiling = Double(self.ceiling(attempt: attempt))
        let unit = min(max(random, 0), 1)
        return Int64((ceiling * (1 - jitter * unit)).rounded())
    }

    /// The delay before `attempt` when the client rotates over `servers` URLs (one attempt
    /// each, round robin): the backoff of round `r` before the first attempt of that round, and
    /// none between the servers of a round, so a dead node costs its clients one failed
    /// connect, not a backoff. With one server, `delay(attempt:random:)`.
    public func delay(attempt: Int, servers: Int, random: Double) -> Int64 {
        let servers = max(servers, 1)
        let attempt = max(attempt, 1)
        guard (attempt - 1) % servers == 0 else { return 0 }
        return delay(attempt: (attempt - 1) / servers + 1, random: random)
    }

    /// Whether `attempt` may still be made.
    public func allows(attempt: Int) -> Bool {
        guard let maxAttempts else { return true }
        return attempt <= maxAttempts
    }
}
