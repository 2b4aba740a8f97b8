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
        var arguments = [bytes(writer), bytes("\(sequence)")]
        for field in fields { arguments += [bytes(field.name), field.value] }
        evaluate(appendOnceScript, keys: [bytes(stream), bytes(writersKey)], arguments: arguments) { outcome(Self.appendOutcome($0)) }
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

    /// What `appendAt` did.
    public enum PositionedAppendOutcome: Sendable, Equatable {
        case appended
        /// Not appended: the stream's last ID is not `position - 1` but `top` (`0-0`: nothing was
        /// ever appended). At or above `position`: another writer appended first. Below
        /// `position - 1`: the stream lost entries the writer built on (a failover promoted a
        /// replica that never had them).
        case refused(top: RedisStreamID)
        /// Not appended: the stream's top is at `position - 1` but is not the entry the writer
        /// built on (its `expectingTop` fields differ): that entry was lost and another one
        /// appended in its place.
        case topReplaced
    }

    /// Appends `fields` at exactly `position` (entry ID `position-0`), only on top of the entry
    /// at `position - 1`, and, when `expectingTop` is not empty, only if that entry holds those
    /// fields (the writer's own record of what it built on): compare-and-append, a Lua script,
    /// atomic in Redis and in its AOF. A writer that proposes "the position after the last one
    /// I applied" thereby succeeds only if nothing was appended since it last read, and nothing
    /// it read was lost since. A bare XADD checks only that the ID is above the top: after a
    /// failover that lost the top, it would leave a gap.
    ///
    /// The stream's last ID is its last-generated-id, which XTRIM and XDEL leave alone (a
    /// trimmed position stays taken); when the entry there is gone, only the ID is compared.
    /// On a promoted replica it is the last entry the replica received.
    public func appendAt(
        _ stream: String, position: UInt64, expectingTop: [RedisStreamEntry.Field] = [], fields: [RedisStreamEntry.Field]
    ) async throws(RedisError) -> PositionedAppendOutcome {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<PositionedAppendOutcome, RedisError>, Never>) in
            loop.execute { [self] in
                appendAt(stream, position: position, expectingTop: expectingTop, fields: fields) { continuation.resume(returning: $0) }
            }
        }
        return try result.get()
    }

    /// `appendAt` on the loop's thread, the outcome as a callback there (a node's core loop:
    /// no hop per turn).
    public func appendAt(
        _ stream: String, position: UInt64, expectingTop: [RedisStreamEntry.Field] = [], fields: [RedisStreamEntry.Field],
        outcome: @escaping (Result<PositionedAppendOutcome, RedisError>) -> Void
    ) {
        precondition(position > 0 && !fields.isEmpty, "stream IDs start at 1-0, and an entry has fields")
        var arguments = [bytes("\(position - 1)-0"), bytes("\(position)-0"), bytes("\(expectingTop.count)")]
        for field in expectingTop { arguments += [bytes(field.name), field.value] }
        for field in fields { arguments += [bytes(field.name), field.value] }
        evaluate(appendAtScript, keys: [bytes(stream)], arguments: arguments) { outcome(Self.positionedOutcome($0)) }
    }

    private static func positionedOutcome(_ result: Result<RedisReply, RedisError>) -> Result<PositionedAppendOutcome, RedisError> {
        result.flatMap { reply in
            guard let parts = reply.elements, parts.count == 2, let verdict = parts[0].integer else {
                return .failure(.unexpectedReply(command: "appendAt", reply: reply))
            }
            switch (verdict, parts[1].string.flatMap(RedisStreamID.init)) {
            case (1, _): return .success(.appended)
            case (0, let top?): return .success(.refused(top: top))
            case (2, _): return .success(.topReplaced)
            default: return .failure(.unexpectedReply(command: "appendAt", reply: reply))
            }
        }
    }
}

/// `appendAt`: ARGV[1] the ID the top must have, ARGV[2] the new entry's ID, ARGV[3] the number
/// n of expected field pairs that follow, then the entry's fields. Returns {1, id} appended,
/// {0, last-generated-id} refused, {2, top} the top's fields differ. The common case (the top
/// entry is the one expected) reads one entry; XINFO only when the top entry is not there.
private let appendAtScript = RedisScript("""
    local expectedCount = tonumber(ARGV[3])
    local first = 4 + 2 * expectedCount
    local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
    if not (top and top[1] == ARGV[1]) then
      local last = '0-0'
      if redis.call('EXISTS', KEYS[1]) == 1 then
        local info = redis.call('XINFO', 'STREAM', KEYS[1])
        for i = 1, #info, 2 do
          if info[i] == 'last-generated-id' then last = info[i + 1] end
        end
      end
      if last ~= ARGV[1] then return {0, last} end
    else
      local held = {}
      for i = 1, #top[2], 2 do held[top[2][i]] = top[2][i + 1] end
      for i = 4, first - 1, 2 do
        if held[ARGV[i]] ~= ARGV[i + 1] then return {2, top[1]} end
      end
    end
    return {1, redis.call('XADD', KEYS[1], ARGV[2], unpack(ARGV, first))}
    """)

/// `appendOnce`: XADD unless the writer's sequence was already recorded, and record it.
private let appendOnceScript = RedisScript("""
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
    """)
