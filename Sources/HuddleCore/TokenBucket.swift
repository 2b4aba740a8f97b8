/// A rate limiter: `rate` tokens per second, at most `burst` saved up. A request costs one
/// token, a byte budget one token per byte.
///
/// Kept per connection on its I/O loop (requests), and per user on the core thread (the fair
/// shares of `UsageBudgets`, the friend-request and room budgets): each owner is one thread,
/// so a bucket takes no lock.
public struct TokenBucket: Sendable {
    private var tokens: Double
    private var updated: Int64
    public let rate: Double
    public let burst: Double

    public init(rate: Double, burst: Double, now: Int64) {
        self.rate = rate
        self.burst = burst
        tokens = burst
        updated = now
    }

    /// Takes `cost` tokens; nil when allowed, else the milliseconds until they are available.
    public mutating func take(_ cost: Double = 1, now: Int64) -> Int64? {
        refill(now: now)
        if tokens >= cost {
            tokens -= cost
            return nil
        }
        return wait(for: cost)
    }

    /// Whether a request of unknown cost may start: nil while the bucket is not in debt, else
    /// the milliseconds until it is out of it. With `charge`, a cost learnt afterwards (the
    /// size of a reply) is paid by the next requests.
    public mutating func admit(now: Int64) -> Int64? {
        refill(now: now)
        return tokens > 0 ? nil : wait(for: Swift.min(1, burst))
    }

    /// Takes `cost` tokens even if that leaves the bucket in debt (at most one burst deep).
    public mutating func charge(_ cost: Double, now: Int64) {
        refill(now: now)
        tokens = Swift.max(tokens - cost, -burst)
    }

    /// True when the bucket is full at `now`: it holds nothing a fresh bucket would not.
    public func isFull(now: Int64) -> Bool {
        tokens + Double(Swift.max(now - updated, 0)) * rate / 1000 >= burst
    }

    private mutating func refill(now: Int64) {
        // The core's clock is the wall clock: a step back must not take tokens away.
        tokens = Swift.min(burst, tokens + Double(Swift.max(now - updated, 0)) * rate / 1000)
        updated = Swift.max(updated, now)
    }

    private func wait(for cost: Double) -> Int64 {
        Swift.max(1, Int64(((cost - tokens) * 1000 / rate).rounded(.up)))
    }
}
