/// protocol.md "Limits", password resets: what asking for codes and guessing them may cost.
///
/// Codes requested per client address and per account (each a mail the operator's sender
/// must send), and codes tried per client address (with the attempts per code, which are
/// durable, this bounds guessing across many accounts). Ephemeral, like `LoginThrottle`.
struct PasswordResetThrottle: Sendable {
    static let requestsPerAddressPerHour: Double = 10
    static let requestsPerAccountPerHour: Double = 3
    static let attemptsPerAddressPerHour: Double = 30

    private var requestsByAddress: [String: TokenBucket] = [:]
    private var requestsByAccount: [Username: TokenBucket] = [:]
    private var attemptsByAddress: [String: TokenBucket] = [:]

    /// The milliseconds until `address` may ask for a code again; nil: it may (counted).
    mutating func admitRequest(from address: String, at time: Int64) -> Int64? {
        Self.take(&requestsByAddress, address, perHour: Self.requestsPerAddressPerHour, at: time)
    }

    /// Whether a code may be mailed to the account now (counted). Refused silently: saying so
    /// would tell that the account exists.
    mutating func admitMail(to user: Username, at time: Int64) -> Bool {
        Self.take(&requestsByAccount, user, perHour: Self.requestsPerAccountPerHour, at: time) == nil
    }

    /// The milliseconds until `address` may try a code again; nil: it may (counted).
    mutating func admitAttempt(from address: String, at time: Int64) -> Int64? {
        Self.take(&attemptsByAddress, address, perHour: Self.attemptsPerAddressPerHour, at: time)
    }

    /// Forgets full buckets, so idle addresses and accounts take no memory.
    mutating func purge(at time: Int64) {
        requestsByAddress = requestsByAddress.filter { !$0.value.isFull(now: time) }
        requestsByAccount = requestsByAccount.filter { !$0.value.isFull(now: time) }
        attemptsByAddress = attemptsByAddress.filter { !$0.value.isFull(now: time) }
    }

    private static func take<Key: Hashable>(_ buckets: inout [Key: TokenBucket], _ key: Key, perHour: Double, at time: Int64) -> Int64? {
        var bucket = buckets[key] ?? TokenBucket(rate: perHour / 3600, burst: perHour, now: time)
        let wait = bucket.take(now: time)
        buckets[key] = bucket
        return wait
    }
}
