/// protocol.md, `login`: failed logins are limited within a sliding window per (account,
/// client address) pair and per address, and an account many addresses fail on is slowed down,
/// never locked: a stranger's guesses cost the stranger, not the account's owner (as Auth0's
/// and OWASP's brute-force guidance have it, since an account lockout is itself an attack).
/// A success clears the pair's and the account's counts. Ephemeral: a restart forgets it.
///
/// Logins whose password is still being verified count against the pair and address limits
/// too, and start the account's backoff: otherwise a client could send a burst of logins before
/// the first failure is counted and have them all checked, however many the limit allows.
struct LoginThrottle: Sendable {
    private var pairs: FailureCounter
    private var addresses: FailureCounter
    private var accounts: FailureCounter
    private let accountBackoff: Int64
    /// When each account over its failure threshold last began an attempt.
    private var lastAttempts: [String: Int64] = [:]

    init(configuration: CoreConfiguration) {
        let window = configuration.loginFailureWindowMilliseconds
        let inFlightRetry = configuration.loginInFlightRetryMilliseconds
        pairs = FailureCounter(limit: configuration.loginFailuresPerAccountAndAddress, window: window, inFlightRetry: inFlightRetry)
        addresses = FailureCounter(limit: configuration.loginFailuresPerAddress, window: window, inFlightRetry: inFlightRetry)
        accounts = FailureCounter(limit: configuration.loginFailuresPerAccount, window: window, inFlightRetry: inFlightRetry)
        accountBackoff = configuration.loginAccountBackoffMilliseconds
    }

    private static func pair(_ account: String, _ address: String) -> String { account + "\n" + address }

    /// nil if a login attempt may proceed; otherwise how long until one may.
    func retryAfter(account: String, address: String, at time: Int64) -> Int64? {
        var waits = [pairs.retryAfter(Self.pair(account, address), at: time), addresses.retryAfter(address, at: time)]
        if accounts.isOverLimit(account, at: time), let last = lastAttempts[account], time < last + accountBackoff {
            waits.append(last + accountBackoff - time)
        }
        return waits.compactMap { $0 }.max()
    }

    mutating func beginVerification(account: String, address: String, at time: Int64) {
        pairs.beginVerification(Self.pair(account, address))
        addresses.beginVerification(address)
        if accounts.isOverLimit(account, at: time) { lastAttempts[account] = time }
    }

    mutating func endVerification(account: String, address: String) {
        pairs.endVerification(Self.pair(account, address))
        addresses.endVerification(address)
    }

    mutating func recordFailure(account: String, address: String, at time: Int64) {
        pairs.recordFailure(Self.pair(account, address), at: time)
        addresses.recordFailure(address, at: time)
        accounts.recordFailure(account, at: time)
    }

    mutating func clearFailures(account: String, address: String) {
        pairs.clearFailures(Self.pair(account, address))
        accounts.clearFailures(account)
        lastAttempts[account] = nil
    }

    /// Forgets failures that left the window and backoffs that ended, so idle keys take no memory.
    mutating func purge(at time: Int64) {
        pairs.purge(at: time)
        addresses.purge(at: time)
        accounts.purge(at: time)
        lastAttempts = lastAttempts.filter { $0.value + accountBackoff > time }
    }

    var trackedKeyCount: Int { pairs.keyCount + addresses.keyCount + accounts.keyCount + lastAttempts.count }
}

/// Failures per key (an account or an address) within a sliding window.
struct FailureCounter: Sendable {
    private struct Entry: Sendable {
        /// Oldest first; only the newest `limit` are kept, which is all a refusal needs.
        var failures: [Int64] = []
        var inFlight = 0
        var isIdle: Bool { failures.isEmpty && inFlight == 0 }
    }

    private struct Departure: Comparable, Sendable {
        var time: Int64
        var key: String

        static func < (lhs: Departure, rhs: Departure) -> Bool {
            (lhs.time, lhs.key) < (rhs.time, rhs.key)
        }
    }

    let limit: Int
    let window: Int64
    let inFlightRetry: Int64
    private var entries: [String: Entry] = [:]
    /// When each recorded failure leaves the window; may name keys cleared since.
    private var departures = MinHeap<Departure>()

    init(limit: Int, window: Int64, inFlightRetry: Int64) {
        // A limit of 0 would refuse every login forever; 1 is the strictest meaningful one.
        self.limit = max(limit, 1)
        self.window = window
        self.inFlightRetry = inFlightRetry
    }

    var keyCount: Int { entries.count }

    func retryAfter(_ key: String, at time: Int64) -> Int64? {
        guard let entry = entries[key] else { return nil }
        let counted = entry.failures.filter { $0 + window > time }
        if counted.count >= limit { return counted[counted.count - limit] + window - time }
        return counted.count + entry.inFlight >= limit ? inFlightRetry : nil
    }

    /// The key has `limit` failures in the window (attempts in flight not counted).
    func isOverLimit(_ key: String, at time: Int64) -> Bool {
        guard let entry = entries[key] else { return false }
        return entry.failures.filter { $0 + window > time }.count >= limit
    }

    mutating func beginVerification(_ key: String) {
        entries[key, default: Entry()].inFlight += 1
    }

    mutating func endVerification(_ key: String) {
        guard entries[key] != nil else { return }
        entries[key]!.inFlight = max(0, entries[key]!.inFlight - 1)
        removeIfIdle(key)
    }

    mutating func recordFailure(_ key: String, at time: Int64) {
        entries[key, default: Entry()].failures.append(time)
        if entries[key]!.failures.count > limit { entries[key]!.failures.removeFirst() }
        departures.push(Departure(time: time + window, key: key))
    }

    mutating func clearFailures(_ key: String) {
        entries[key]?.failures = []
        removeIfIdle(key)
    }

    mutating func purge(at time: Int64) {
        while let next = departures.min, next.time <= time {
            _ = departures.popMin()
            entries[next.key]?.failures.removeAll { $0 + window <= time }
            removeIfIdle(next.key)
        }
    }

    private mutating func removeIfIdle(_ key: String) {
        if entries[key]?.isIdle == true { entries[key] = nil }
    }
}
