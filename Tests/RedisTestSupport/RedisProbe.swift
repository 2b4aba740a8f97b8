import CHiredis
import HuddleRedis

/// Blocking commands over hiredis's synchronous API, independent of the client under test: how
/// the test support sees whether a redis-server answers (PING) and asks a replica or a Sentinel
/// about its state, and the blocking side of the round-trip measurement.
public enum RedisProbe {
    /// One command on a connection of its own: the reply's text, or nil when nothing answered
    /// within `timeout` seconds.
    public static func command(port: Int, _ arguments: [String], timeout: Double = 1) -> String? {
        let seconds = Int(timeout)
        let limit = timeval(tv_sec: seconds, tv_usec: Int((timeout - Double(seconds)) * 1e6))
        guard let context = redisConnectWithTimeout("127.0.0.1", Int32(port), limit) else { return nil }
        defer { redisFree(context) }
        guard context.pointee.err == 0, redisSetTimeout(context, limit) == REDIS_OK else { return nil }
        return command(on: context, arguments)
    }

    /// One command on `context`: the reply's text (status, bulk or error; an array's elements
    /// joined by newlines), or nil when the connection failed.
    public static func command(on context: UnsafeMutablePointer<redisContext>, _ arguments: [String]) -> String? {
        let raw = HiredisCodec.withArgumentVector(arguments.map { Array($0.utf8) }) { argc, argv, lengths in
            redisCommandArgv(context, argc, argv, lengths)
        }
        guard let reply = raw?.assumingMemoryBound(to: redisReply.self) else { return nil }
        defer { freeReplyObject(reply) }
        return text(HiredisCodec.copy(reply))
    }

    private static func text(_ reply: RedisReply) -> String {
        switch reply {
        case .array(let elements): elements.map(text).joined(separator: "\n")
        case .integer(let value): "\(value)"
        case .null: ""
        case .status(let text), .error(let text): text
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        }
    }
}
