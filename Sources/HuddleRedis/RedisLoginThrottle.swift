/// Login attempts limited across every node sharing one Redis, so that an attacker cannot
/// multiply its guesses by the node count (issue 14). Each node keeps its own `LoginThrottle`
/// in the core as well; this one bounds the sum.
///
/// Three token buckets, as the core's throttle has three counts: per (account, address) pair,
/// per address, and per account. Each attempt takes a token from all three, or from none when
/// one is empty (then the answer is the wait until all three have one). A successful login
/// gives its tokens back the way the core clears failures on success: the pair's and the
/// account's buckets become full, the address's gets its one token back. So, as in the core,
/// only failures (and attempts still being verified) count.
///
/// Each bucket is one string key holding the Redis time (ms) at which it is full again (GCRA):
/// taking a token moves that time one refill interval later; a key expires exactly when its
/// bucket is full, so idle accounts and addresses take no memory. Time is Redis's own
/// (`TIME`), so the nodes' clocks do not matter. One Lua script, one round trip per attempt,
/// next to a PBKDF2 that costs hundreds of milliseconds.
///
/// When Redis cannot be reached the answer is the error, never "allowed": a node without its
/// Redis must not give unlimited guesses; the caller answers `unavailable` (fail closed, as
/// writes do while Redis is down).
public struct RedisLoginThrottle: Sendable {
    /// One bucket: `capacity` attempts at once, one more every `refillMilliseconds`.
    public struct Bucket: Sendable, Equatable {
        public var capacity: Int
        public var refillMilliseconds: Int64
        public init(capacity: Int, refillMilliseconds: Int64) {
            // A capacity of 0 would refuse every login forever; 1 is the strictest meaningful one.
            self.capacity = max(capacity, 1)
            self.refillMilliseconds = max(refillMilliseconds, 1)
        }
    }

    public struct Limits: Sendable, Equatable {
        public var perAccountAndAddress: Bucket
        public var perAddress: Bucket
        public var perAccount: Bucket
        public init(perAccountAndAddress: Bucket, perAddress: Bucket, perAccount: Bucket) {
            self.perAccountAndAddress = perAccountAndAddress
            self.perAddress = perAddress
            self.perAccount = perAccount
        }
    }

    public enum Admission: Sendable, Equatable {
        case allowed
        case refused(retryAfterMilliseconds: Int64)
    }

    public let client: RedisClient
    public let limits: Limits
    public let keyPrefix: String

    public init(client: RedisClient, limits: Limits, keyPrefix: String = "huddle:login:") {
        self.client = client
        self.limits = limits
        self.keyPrefix = keyPrefix
    }

    /// The keys of the three buckets, pair first. An unknown login is limited under its own
    /// spelling, as the core does.
    public func keys(account: String, address: String) -> [String] {
        [keyPrefix + "pair:" + account + "\n" + address, keyPrefix + "address:" + address, keyPrefix + "account:" + account]
    }

    private var buckets: [Bucket] { [limits.perAccountAndAddress, limits.perAddress, limits.perAccount] }

    /// Takes one attempt for `account` from `address`, on the client's loop; `outcome` runs there.
    public func admit(account: String, address: String, outcome: @escaping (Result<Admission, RedisError>) -> Void) {
        run("take", account: account, address: address) { result in
            outcome(result.flatMap { reply in
                guard let wait = reply.integer, wait >= 0 else { return .failure(.unexpectedReply(command: "login throttle", reply: reply)) }
                return .success(wait == 0 ? .allowed : .refused(retryAfterMilliseconds: wait))
            })
        }
    }

    /// Gives back what a successful login took, on the client's loop. Best effort: if it fails,
    /// the tokens come back by themselves with time.
    public func succeeded(account: String, address: String, done: @escaping (Result<Void, RedisError>) -> Void = { _ in }) {
        run("succeeded", account: account, address: address) { done($0.map { _ in () }) }
    }

    private func run(_ mode: String, account: String, address: String, reply: @escaping (Result<RedisReply, RedisError>) -> Void) {
        var arguments = [bytes(mode)]
        for bucket in buckets { arguments += [bytes("\(bucket.refillMilliseconds)"), bytes("\(bucket.capacity)")] }
        client.evaluate(loginThrottleScript, keys: keys(account: account, address: address).map(bytes), arguments: arguments, reply: reply)
    }

    /// `admit` from any thread.
    public func admit(account: String, address: String) async throws(RedisError) -> Admission {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Admission, RedisError>, Never>) in
            client.loop.execute { [self] in admit(account: account, address: address) { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }

    /// `succeeded` from any thread.
    public func succeeded(account: String, address: String) async throws(RedisError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, RedisError>, Never>) in
            client.loop.execute { [self] in succeeded(account: account, address: address) { continuation.resume(returning: $0) } }
        }
        try result.get()
    }
}

/// KEYS: the buckets; ARGV: 'take' or 'succeeded', then each bucket's refill interval (ms)
/// and capacity. A bucket's key holds when it is full again (Redis time, ms); absent = full.
/// 'take' returns 0 (a token taken from each) or the milliseconds until each has one (nothing
/// taken). 'succeeded' empties the first and last (pair, account) and gives one token back
/// to the others. Numbers are written with %d: Lua's default formatting turns large ones
/// into exponents.
private let loginThrottleScript = RedisScript("""
    local time = redis.call('TIME')
    local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    local function store(key, full)
      if full <= now then
        redis.call('DEL', key)
      else
        redis.call('SET', key, string.format('%d', full), 'PX', string.format('%d', full - now))
      end
    end
    if ARGV[1] == 'take' then
      local wait = 0
      local fulls = {}
      for i = 1, #KEYS do
        local interval = tonumber(ARGV[2 * i])
        local capacity = tonumber(ARGV[2 * i + 1])
        local full = math.max(tonumber(redis.call('GET', KEYS[i]) or '0'), now) + interval
        wait = math.max(wait, full - now - capacity * interval)
        fulls[i] = full
      end
      if wait > 0 then return wait end
      for i = 1, #KEYS do store(KEYS[i], fulls[i]) end
      return 0
    end
    for i = 1, #KEYS do
      if i == 1 or i == #KEYS then
        redis.call('DEL', KEYS[i])
      else
        local full = tonumber(redis.call('GET', KEYS[i]) or '0')
        store(KEYS[i], full - tonumber(ARGV[2 * i]))
      end
    end
    return 0
    """)
