/// protocol.md, `login`: failed logins are limited per account and per client address within a
/// sliding window; a success clears the account's count. Ephemeral: a restart forgets it.
///
/// Logins whose password is still being verified count against the limit too: otherwise a
/// client could send a burst of logins before the first failure is counted and have them all
/// checked, however many the limit allows.
struct LoginThrottle: Sendable {
    private var accounts: FailureCounter
    private var addresses: FailureCounter

    init(configuration: CoreConfiguration) {
        accounts = FailureCounter(
            limit: configuration.loginFailuresPerAccount,
            window: configuration.loginFailureWindowMilliseconds,
            inFlightRetry: configuration.loginInFlightRetryMilliseconds
        )
        addresses = FailureCounter(
            limit: configuration.loginFailuresPerAddress,
            window: configuration.loginFailureWindowMilliseconds,
            inFlightRetry: configuration.loginInFlightRetryMilliseconds
        )
    }

    /// nil if a login attempt may proceed; otherwise how long until one may.
    func retryAfter(account: String, address: String, at time: Int64) -> Int64? {
        switch (accounts.retryAfter(account, at: time), addresses.retryAfter(address, at: time)) {
        case (nil, nil): nil
        case let (wait?, nil), let (nil, wait?): wait
        case let (accountWait?, addressWait?): max(accountWait, addressWait)
        }
    }

    mutating func beginVerification(account: String, address: String) {
        accounts.beginVerification(account)
        addresses.beginVerification(address)
    }

    mutating func endVerification(account: String, address: String) {
        accounts.endVerification(account)
        addresses.endVerification(address)
    }

    mutating func recordFailure(account: String, address: String, at time: Int64) {
        accounts.recordFailure(account, at: time)
        addresses.recordFailure(address, at: time)
    }

    mutating func clearFailures(account: String) {
        accounts.clearFailures(account)
    }

    /// Forgets failures that left the window, so idle keys take no memory.
    mutating func purge(at time: Int64) {
        accounts.purge(at: time)
        addresses.purge(at: time)
    }

    var trackedKeyCount: Int { accounts.keyCount + addresses.keyCount }
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
