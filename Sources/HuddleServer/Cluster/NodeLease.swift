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

    /// Renews KEYS[1] with ARGV[1] for ARGV[2] ms if it holds ARGV[1] or nothing; returns
    /// {1 or 0, the ID of KEYS[2]'s newest entry or "0-0"}.
    static let renewScript = """
        local holder = redis.call('GET', KEYS[1])
        local held = 0
        if holder == false or holder == ARGV[1] then
          redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
          held = 1
        end
        local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
        local top = '0-0'
        if last[1] then top = last[1][1] end
        return {held, top}
        """

    /// Takes the lease for `nodeName` before the node starts, on a loop of its own (the core's
    /// is not running yet); throws a plain sentence when Redis cannot be reached within
    /// `timeout` ms or a live node has the name.
    static func claim(_ settings: ClusterSettings, holder: String, timeout: Int64 = 10_000) throws {
        let loop = try EventLoop(index: -1, readBufferSize: 16)
        let thread = try LoopThread.spawn(name: "huddle-redis-start") { loop.run() }
        let outcome = Mutex<Result<Bool, RedisError>?>(nil)
        let client = RedisClient(endpoint: settings.redis, loop: loop)
        loop.execute {
            client.onStatusChange = { address, _ in
                guard address != nil else { return }
                client.send([
                    Array("SET".utf8), Array(key(settings.nodeName).utf8), Array(holder.utf8), Array("NX".utf8), Array("PX".utf8),
                    Array("\(ClusterLog.leaseMilliseconds)".utf8),
                ]) { result in
                    outcome.withLock { $0 = $0 ?? result.map { $0 == .status("OK") } }
                }
            }
        }
        let deadline = MonotonicClock.milliseconds() + timeout
        var result: Result<Bool, RedisError>?
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
            throw ConfigurationError("--redis \(settings.redis): cannot reach Redis within \(timeout / 1000) s")
        case .failure(let error)?:
            throw ConfigurationError("--redis \(settings.redis): \(error)")
        case .success(false)?:
            throw ConfigurationError(
                "--node-name \(settings.nodeName): a live node of the cluster already has this name (names must be unique; its lease expires \(ClusterLog.leaseMilliseconds / 1000) s after it stops)")
        case .success(true)?:
            break
        }
    }
}
