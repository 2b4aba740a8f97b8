/// A lease in Redis that one process of many holds at a time: the key names its holder and
/// expires after `milliseconds` unless the holder renews it. A holder that dies or stalls stops
/// renewing, and another takes the lease once it has expired. What the cluster's singletons
/// (the snapshotter, the ticker) are decided by.
///
/// Taking and renewing are one Lua script, atomic in Redis: "renew if it is mine, take it if it
/// is free". Plain SET NX PX plus a PEXPIRE could extend a lease another process had just taken
/// in between. The holder counts its lease from when it *sent* the request that won or renewed
/// it, so it stops acting as holder no later than Redis lets the key expire.
///
/// Loop thread only (that of `client`).
public final class RedisLease {
    public enum State: Sendable, Equatable {
        /// No answer yet, or the last request failed and the lease this process held ran out.
        case unknown
        case held
        /// Another process holds it.
        case heldByAnother
    }

    public let key: String
    /// Unique per process (a restarted node is another holder), so that two processes never
    /// both take one lease for their own.
    public let holder: String
    public let milliseconds: Int64
    private let client: RedisClient
    /// Monotonic ms until which this process is the holder.
    private var heldUntil: Int64 = .min
    private var lastAnswerRefused = false
    private var lastRequestAt: Int64?
    private var requestInFlight = false

    public init(key: String, holder: String, milliseconds: Int64, client: RedisClient) {
        precondition(milliseconds >= 3, "a lease renewed every third of its time needs at least 3 ms")
        self.key = key
        self.holder = holder
        self.milliseconds = milliseconds
        self.client = client
    }

    public func state(now: Int64) -> State {
        if now < heldUntil { return .held }
        return lastAnswerRefused ? .heldByAnother : .unknown
    }

    /// Asks Redis to take or renew the lease once a third of its time has passed since the last
    /// request (two renewals can fail before it runs out). `answered` runs on the loop with
    /// whether this process holds it now, or why Redis could not say. True when a request went
    /// out (a command sent right after it is answered after it).
    @discardableResult
    public func refreshIfDue(now: Int64, answered: @escaping (Result<Bool, RedisError>) -> Void = { _ in }) -> Bool {
        guard !requestInFlight, lastRequestAt.map({ now - $0 >= milliseconds / 3 }) ?? true else { return false }
        requestInFlight = true
        lastRequestAt = now
        client.evaluate(Self.takeOrRenew, keys: [bytes(key)], arguments: [bytes(holder), bytes("\(milliseconds)")]) { [self] result in
            requestInFlight = false
            switch result {
            case .success(.integer(let won)):
                lastAnswerRefused = won != 1
                heldUntil = won == 1 ? now + milliseconds : .min
                answered(.success(won == 1))
            case .success(let reply):
                answered(.failure(.unexpectedReply(command: "lease", reply: reply)))
            case .failure(let error):
                answered(.failure(error))
            }
        }
        return true
    }

    /// Gives the lease up if this process holds it (a clean shutdown), so that another takes it
    /// at once rather than after it expires.
    public func release(done: @escaping (Result<Bool, RedisError>) -> Void = { _ in }) {
        heldUntil = .min
        client.evaluate(Self.releaseIfMine, keys: [bytes(key)], arguments: [bytes(holder)]) { result in
            done(result.flatMap { reply in
                reply.integer.map { .success($0 == 1) } ?? .failure(.unexpectedReply(command: "lease release", reply: reply))
            })
        }
    }

    private static let takeOrRenew = RedisScript("""
        local current = redis.call('GET', KEYS[1])
        if current == ARGV[1] then
          redis.call('PEXPIRE', KEYS[1], ARGV[2])
          return 1
        elseif not current then
          redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
          return 1
        end
        return 0
        """)

    private static let releaseIfMine = RedisScript("""
        if redis.call('GET', KEYS[1]) == ARGV[1] then
          return redis.call('DEL', KEYS[1])
        end
        return 0
        """)
}
