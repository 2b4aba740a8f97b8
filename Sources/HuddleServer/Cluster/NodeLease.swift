import Glibc
import HuddleIO
import HuddleRedis
import Synchronization

/// A node's name is unique in its cluster: `huddle:node:<name>` (SET NX PX) is held by the live
/// node of that name, renewed each second (`ClusterLog`), and a node refuses to start while
/// another one holds it.
enum NodeLease {
    static func key(_ name: String) -> String { "huddle:node:" + name }

    /// The name as part of a file name: every byte outside [A-Za-z0-9._-] becomes `_`.
    static func fileName(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
    }

    /// The ticker: the one node that sends `tick` (its durable part: purges, trims, activity
    /// expiry); the others send `localTick` and get the durable part from its entries.
    static let tickerKey = "huddle:ticker"

    /// Renews KEYS[1] with ARGV[1] for ARGV[2] ms if it holds ARGV[1] or nothing, and takes or
    /// renews the ticker lease KEYS[3] the same way; returns {1 or 0 (the node's lease),
    /// the ID of KEYS[2]'s newest entry or "0-0", 1 or 0 (the ticker)}.
    static let renewScript = """
        local function renew(key)
          local holder = redis.call('GET', key)
          if holder == false or holder == ARGV[1] then
            redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
            return 1
          end
          return 0
        end
        local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
        local top = '0-0'
        if last[1] then top = last[1][1] end
        return {renew(KEYS[1]), top, renew(KEYS[3])}
        """

    /// Takes KEYS[1] for ARGV[1] for ARGV[2] ms if nobody or ARGV[1] holds it: 1, else 0. Its
    /// own holder is success, so a claim tried again after a lost reply (the SET landed, the
    /// connection dropped) is not refused by itself.
    static let claimScript = """
        local holder = redis.call('GET', KEYS[1])
        if holder == false or holder == ARGV[1] then
          redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
          return 1
        end
        return 0
        """

    /// Takes the lease for `nodeName` before the node starts, on a loop of its own (the core's
    /// is not running yet); throws a plain sentence when Redis does not take it within
    /// `timeout` ms (with the last error it gave) or a live node has the name (it still renews
    /// it after a lease's time).
    static func claim(_ settings: ClusterSettings, holder: String, timeout: Int64 = 10_000) throws {
        let loop = try EventLoop(index: -1, readBufferSize: 16)
        let thread = try LoopThread.spawn(name: "huddle-redis-start") { loop.run() }
        let outcome = Mutex<Bool?>(nil)
        let lastError = Mutex<RedisError?>(nil)
        let client = RedisClient(endpoint: settings.redis, loop: loop)
        loop.execute {
            // A node that died keeps its name until its lease expires; a live one renews it. So
            // a refusal is only final once a whole lease has passed (a restart after a crash
            // waits for it instead of failing).
            let finalAfter = MonotonicClock.milliseconds() + Int64(ClusterLog.leaseMilliseconds) + 1_000
            @Sendable func attempt() {
                guard outcome.withLock({ $0 == nil }) else { return }
                client.send([
                    Array("EVAL".utf8), Array(claimScript.utf8), Array("1".utf8), Array(key(settings.nodeName).utf8), Array(holder.utf8),
                    Array("\(ClusterLog.leaseMilliseconds)".utf8),
                ]) { result in
                    switch result {
                    case .success(.integer(1)):
                        outcome.withLock { $0 = true }
                    case .success(.integer(0)) where MonotonicClock.milliseconds() >= finalAfter:
                        outcome.withLock { $0 = false }
                    case .success(.integer(0)):
                        _ = loop.schedule(after: 250) { attempt() }
                    case .success(let reply):
                        lastError.withLock { $0 = .unexpectedReply(command: "EVAL", reply: reply) }
                        _ = loop.schedule(after: 250) { attempt() }
                    case .failure(let error):
                        // Loading its data after a restart, or the connection dropped: the
                        // reconnection (or the next try) asks again, idempotently.
                        lastError.withLock { $0 = error }
                        _ = loop.schedule(after: 250) { attempt() }
                    }
                }
            }
            // Connected already if the connect finished within the client's first task.
            if client.connectedAddress != nil { attempt() }
            client.onStatusChange = { address, error in
                if let error { lastError.withLock { $0 = error } }
                if address != nil { attempt() }
            }
        }
        let deadline = MonotonicClock.milliseconds() + timeout
        var result: Bool?
        while result == nil, MonotonicClock.milliseconds() < deadline {
            var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
            nanosleep(&pause, nil)
            result = outcome.withLock { $0 }
        }
        client.close()
        loop.execute { loop.stop() }
        thread.join()
        switch result {
        case nil:
            let reason = lastError.withLock { $0 }.map { ": \($0)" } ?? ""
            throw ConfigurationError("--redis \(settings.redis): Redis did not take this node's name within \(timeout / 1000) s\(reason)")
        case false?:
            throw ConfigurationError(
                "--node-name \(settings.nodeName): a live node of the cluster already has this name (names must be unique; its lease expires \(ClusterLog.leaseMilliseconds / 1000) s after it stops)")
        case true?:
            break
        }
    }
}
