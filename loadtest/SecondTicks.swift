/// Which whole seconds of a run a sample closes. Samples are due at the run's second
/// boundaries (start + 1 s, + 2 s, …), each scheduled afresh from the start time, so timer
/// lateness never accumulates into a skipped second; and when the loop was busy past a
/// boundary, the sample taken late says which seconds it covers instead of hiding them.
struct SecondTicks {
    let start: UInt64
    /// Seconds 1…`sampled` are covered by samples already taken.
    private(set) var sampled = 0

    init(start: UInt64) { self.start = start }

    /// The seconds a sample taken at `now` covers (more than one when it is late), or nil
    /// when the next boundary has not passed yet.
    mutating func close(at now: UInt64) -> ClosedRange<Int>? {
        let elapsed = now > start ? Int((now - start) / 1_000_000_000) : 0
        guard elapsed > sampled else { return nil }
        defer { sampled = elapsed }
        return (sampled + 1)...elapsed
    }

    /// Milliseconds from `now` until the next boundary, rounded up so the timer never fires early.
    func millisecondsToNext(from now: UInt64) -> Int64 {
        let next = start + UInt64(sampled + 1) * 1_000_000_000
        return next > now ? Int64((next - now + 999_999) / 1_000_000) : 0
    }

    /// "5 s", or "3–5 s" for a late sample.
    static func label(_ seconds: ClosedRange<Int>) -> String {
        seconds.count == 1 ? "\(seconds.lowerBound) s" : "\(seconds.lowerBound)–\(seconds.upperBound) s"
    }
}
