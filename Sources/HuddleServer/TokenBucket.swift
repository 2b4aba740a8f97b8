/// A request-rate limiter: `rate` tokens per second, at most `burst` saved up. Kept per
/// connection on its loop, so limiting costs no cross-thread traffic.
struct TokenBucket {
    private var tokens: Double
    private var updated: Int64
    let rate: Double
    let burst: Double

    init(rate: Double, burst: Double, now: Int64) {
        self.rate = rate
        self.burst = burst
        tokens = burst
        updated = now
    }

    /// Takes one token; nil when allowed, else the milliseconds until one is available.
    mutating func take(now: Int64) -> Int64? {
        tokens = min(burst, tokens + Double(now - updated) * rate / 1000)
        updated = now
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return Int64(((1 - tokens) * 1000 / rate).rounded(.up))
    }
}
