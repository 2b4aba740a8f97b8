import CHuddleShims

/// A Lua script run atomically in Redis (and written to its AOF as one unit), sent by its SHA-1
/// (EVALSHA) so that the source crosses the network once per Redis process, not per call.
public struct RedisScript: Sendable {
    public let source: String
    public let sha1: String

    public init(_ source: String) {
        self.source = source
        let text = Array(source.utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        // OpenSSL's one-shot SHA1 reads `text` and writes the 20-byte digest in place.
        _ = text.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in SHA1(input.baseAddress, input.count, output.baseAddress) }
        }
        sha1 = digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

extension RedisClient {
    /// Runs `script` with `keys` and `arguments` on the loop's thread, the reply as a callback
    /// there: EVALSHA, then EVAL when Redis does not know the script (a restarted or failed-over
    /// Redis starts with an empty script cache).
    public func evaluate(_ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]], reply: @escaping (Result<RedisReply, RedisError>) -> Void) {
        let rest = [bytes("\(keys.count)")] + keys + arguments
        send([bytes("EVALSHA"), bytes(script.sha1)] + rest) { [self] result in
            if case .failure(.server(let message)) = result, message.hasPrefix("NOSCRIPT") {
                send([bytes("EVAL"), bytes(script.source)] + rest, reply: reply)
            } else {
                reply(result)
            }
        }
    }

    /// `evaluate` from any thread.
    public func evaluate(_ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]]) async throws(RedisError) -> RedisReply {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<RedisReply, RedisError>, Never>) in
            loop.execute { [self] in evaluate(script, keys: keys, arguments: arguments) { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }
}
