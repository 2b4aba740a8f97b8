import CHuddleShims

/// The two conditional appends the cluster's shared log can be built on (docs/ARCHITECTURE.md,
/// "Cluster mode (design)"), so that a retried or concurrent append never takes a log position
/// twice.
extension RedisClient {
    public enum AppendOutcome: Sendable, Equatable {
        case appended(RedisStreamID)
        /// The writer's sequence was at or below its last append, whose ID this is: the entry
        /// is already in the log (a retry after a lost reply), nothing was added.
        case duplicate(RedisStreamID)
    }

    /// Appends `fields` once per (`writer`, `sequence`): a Lua script, atomic in Redis (and in
    /// its AOF, where it is written as one MULTI/EXEC), that XADDs only if `sequence` is above
    /// the last one recorded for `writer` in the hash `writersKey`, and records it. Sequences of
    /// one writer must increase; they need not be contiguous. `fields` must not be empty.
    public func appendOnce(
        _ stream: String, writersKey: String, writer: String, sequence: UInt64, fields: [RedisStreamEntry.Field]
    ) async throws(RedisError) -> AppendOutcome {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<AppendOutcome, RedisError>, Never>) in
            loop.execute { [self] in
                appendOnce(stream, writersKey: writersKey, writer: writer, sequence: sequence, fields: fields) { continuation.resume(returning: $0) }
            }
        }
        return try result.get()
    }

    /// `appendOnce` on the loop's thread, the outcome as a callback there.
    public func appendOnce(
        _ stream: String, writersKey: String, writer: String, sequence: UInt64, fields: [RedisStreamEntry.Field],
        outcome: @escaping (Result<AppendOutcome, RedisError>) -> Void
    ) {
        var arguments = [bytes("2"), bytes(stream), bytes(writersKey), bytes(writer), bytes("\(sequence)")]
        for field in fields { arguments += [bytes(field.name), field.value] }
        send([bytes("EVALSHA"), bytes(AppendOnceScript.sha1)] + arguments) { [self] result in
            if case .failure(.server(let message)) = result, message.hasPrefix("NOSCRIPT") {
                // A restarted or failed-over Redis has an empty script cache: EVAL loads it again.
                send([bytes("EVAL"), bytes(AppendOnceScript.source)] + arguments) { outcome(Self.appendOutcome($0)) }
            } else {
                outcome(Self.appendOutcome(result))
            }
        }
    }

    private static func appendOutcome(_ result: Result<RedisReply, RedisError>) -> Result<AppendOutcome, RedisError> {
        result.flatMap { reply in
            guard let parts = reply.elements, parts.count == 2, let added = parts[0].integer,
                  let id = parts[1].string.flatMap(RedisStreamID.init) else {
                return .failure(.unexpectedReply(command: "appendOnce", reply: reply))
            }
            return .success(added == 1 ? .appended(id) : .duplicate(id))
        }
    }

    /// Appends `fields` at exactly `position` (entry ID `position-0`) or not at all: false when
    /// the stream already reached `position` (someone else appended there, or after it). A
    /// writer that proposes "the position after the last one I applied" thereby succeeds only
    /// if nothing was appended since it last read: compare-and-append with a single XADD. Keep
    /// one in flight per writer: Redis only checks that the ID is above the top, so a second
    /// append at `position + 1` sent behind this one would succeed on top of someone else's
    /// entry at `position` if this one lost.
    public func appendAt(_ stream: String, position: UInt64, fields: [RedisStreamEntry.Field]) async throws(RedisError) -> Bool {
        do {
            _ = try await xadd(stream, id: RedisStreamID(milliseconds: position, sequence: 0), fields: fields)
            return true
        } catch let error where Self.isPositionTaken(error) {
            return false
        }
    }

    /// `appendAt` on the loop's thread, the outcome as a callback there (a node's core loop:
    /// no hop per turn).
    public func appendAt(
        _ stream: String, position: UInt64, fields: [RedisStreamEntry.Field], outcome: @escaping (Result<Bool, RedisError>) -> Void
    ) {
        var arguments = [bytes("XADD"), bytes(stream), bytes("\(position)-0")]
        for field in fields { arguments += [bytes(field.name), field.value] }
        send(arguments) { result in
            switch result {
            case .success(let reply) where reply.string.flatMap(RedisStreamID.init) != nil: outcome(.success(true))
            case .success(let reply): outcome(.failure(.unexpectedReply(command: "XADD", reply: reply)))
            case .failure(let error) where Self.isPositionTaken(error): outcome(.success(false))
            case .failure(let error): outcome(.failure(error))
            }
        }
    }

    /// XADD's refusal of an explicit ID at or below the stream's top.
    private static func isPositionTaken(_ error: RedisError) -> Bool {
        if case .server(let message) = error { return message.contains("equal or smaller than the target stream top item") }
        return false
    }
}

/// The Lua source of `appendOnce`, and its SHA-1 for EVALSHA (computed, not written twice).
enum AppendOnceScript {
    static let source = """
        local last = redis.call('HGET', KEYS[2], ARGV[1])
        if last then
          local space = string.find(last, ' ', 1, true)
          if tonumber(ARGV[2]) <= tonumber(string.sub(last, 1, space - 1)) then
            return {0, string.sub(last, space + 1)}
          end
        end
        local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))
        redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ' ' .. id)
        return {1, id}
        """

    static let sha1: String = {
        let text = Array(source.utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        // OpenSSL's one-shot SHA1 reads `text` and writes the 20-byte digest in place.
        _ = text.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in SHA1(input.baseAddress, input.count, output.baseAddress) }
        }
        return digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }()
}
