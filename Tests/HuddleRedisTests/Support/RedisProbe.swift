import CHiredis
import Glibc

/// A one-off blocking command over hiredis's synchronous API, independent of the client under
/// test: how the test support sees whether a redis-server answers (PING) and asks a replica or
/// a Sentinel about its state.
enum RedisProbe {
    /// The reply's text (status, bulk or error; an array's elements joined by newlines), or nil
    /// when nothing answered within `timeout` seconds.
    static func command(port: Int, _ arguments: [String], timeout: Double = 1) -> String? {
        let seconds = Int(timeout)
        let limit = timeval(tv_sec: seconds, tv_usec: Int((timeout - Double(seconds)) * 1e6))
        guard let context = redisConnectWithTimeout("127.0.0.1", Int32(port), limit) else { return nil }
        defer { redisFree(context) }
        guard context.pointee.err == 0, redisSetTimeout(context, limit) == REDIS_OK else { return nil }
        let raw = withArgumentVector(arguments) { argc, argv, lengths in redisCommandArgv(context, argc, argv, lengths) }
        guard let reply = raw?.assumingMemoryBound(to: redisReply.self) else { return nil }
        defer { freeReplyObject(reply) }
        return text(reply)
    }

    private static func text(_ reply: UnsafeMutablePointer<redisReply>) -> String {
        let node = reply.pointee
        switch node.type {
        case REDIS_REPLY_ARRAY:
            return (0..<node.elements).map { text(node.element[$0]!) }.joined(separator: "\n")
        case REDIS_REPLY_INTEGER:
            return "\(node.integer)"
        case REDIS_REPLY_NIL:
            return ""
        default:
            // status, error and bulk strings: `len` bytes at `str`.
            return String(decoding: UnsafeRawBufferPointer(start: node.str, count: node.len), as: UTF8.self)
        }
    }

    /// argv/argvlen for hiredis, valid during `body` (hiredis copies the command).
    private static func withArgumentVector<Result>(
        _ arguments: [String], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Result
    ) -> Result {
        let copies = arguments.map { strdup($0)! }
        defer { copies.forEach { free($0) } }
        var pointers = copies.map { UnsafePointer($0) as UnsafePointer<CChar>? }
        let lengths = arguments.map { $0.utf8.count }
        return body(Int32(arguments.count), &pointers, lengths)
    }
}
