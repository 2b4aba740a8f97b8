/// The commands cluster mode uses, typed: replies parsed, odd shapes reported as
/// `unexpectedReply` rather than guessed at. Any thread (they go through `command`).
extension RedisClient {
    /// XADD: appends an entry and returns its ID. With `id` nil Redis picks the next one; with
    /// an explicit `id` the append fails (`server("ERR … equal or smaller …")`) unless `id` is
    /// above every ID the stream ever had — trimmed or deleted entries included. `fields` must
    /// not be empty (Redis refuses an entry without fields).
    public func xadd(_ stream: String, id: RedisStreamID? = nil, fields: [RedisStreamEntry.Field]) async throws(RedisError) -> RedisStreamID {
        var arguments = [bytes("XADD"), bytes(stream), bytes(id?.description ?? "*")]
        for field in fields { arguments += [bytes(field.name), field.value] }
        let reply = try await command(bytes: arguments)
        guard let added = reply.string.flatMap(RedisStreamID.init) else { throw .unexpectedReply(command: "XADD", reply: reply) }
        return added
    }

    /// XRANGE from `start` to `end` inclusive (nil: the stream's ends), at most `count` entries.
    public func xrange(_ stream: String, from start: RedisStreamID? = nil, to end: RedisStreamID? = nil, count: Int? = nil) async throws(RedisError) -> [RedisStreamEntry] {
        try await onLoop { [self] in xrange(stream, from: start, to: end, count: count, reply: $0) }
    }

    /// XRANGE on the loop's thread, the entries as a callback there.
    public func xrange(
        _ stream: String, from start: RedisStreamID? = nil, to end: RedisStreamID? = nil, count: Int? = nil,
        reply: @escaping (Result<[RedisStreamEntry], RedisError>) -> Void
    ) {
        var arguments = ["XRANGE", stream, start?.description ?? "-", end?.description ?? "+"]
        if let count { arguments += ["COUNT", "\(count)"] }
        send(arguments.map(bytes)) { [self] result in reply(result.flatMap { reply in Result { () throws(RedisError) in try entries(reply, command: "XRANGE") } }) }
    }

    /// XREAD [BLOCK]: the entries of `stream` after `after`, waiting up to `blockMilliseconds`
    /// for one to come (nil: do not wait). Empty when none came. Blocks this client's connection
    /// meanwhile: use a client of its own for it.
    public func xread(_ stream: String, after: RedisStreamID, count: Int? = nil, blockMilliseconds: Int? = nil) async throws(RedisError) -> [RedisStreamEntry] {
        var arguments = ["XREAD"]
        if let count { arguments += ["COUNT", "\(count)"] }
        if let blockMilliseconds { arguments += ["BLOCK", "\(blockMilliseconds)"] }
        arguments += ["STREAMS", stream, after.description]
        let reply = try await command(arguments, blockingFor: blockMilliseconds.map { $0 == 0 ? .max : Int64($0) } ?? 0)
        return try xreadEntries(reply)
    }

    private func xreadEntries(_ reply: RedisReply) throws(RedisError) -> [RedisStreamEntry] {
        if reply == .null { return [] }
        guard let streams = reply.elements, streams.count == 1, let pair = streams[0].elements, pair.count == 2 else {
            throw .unexpectedReply(command: "XREAD", reply: reply)
        }
        return try entries(pair[1], command: "XREAD")
    }

    /// XTRIM MINID (exact, not `~`): removes the entries of `stream` below `minimumID`; how many
    /// went. Their IDs stay taken: an explicit-ID XADD at or below them is still refused.
    public func xtrim(_ stream: String, minimumID: RedisStreamID, reply: @escaping (Result<Int, RedisError>) -> Void) {
        send([bytes("XTRIM"), bytes(stream), bytes("MINID"), bytes(minimumID.description)]) { result in
            reply(Self.integer(result, command: "XTRIM"))
        }
    }

    public func xtrim(_ stream: String, minimumID: RedisStreamID) async throws(RedisError) -> Int {
        try await onLoop { [self] in xtrim(stream, minimumID: minimumID, reply: $0) }
    }

    // Sorted sets: members with a score, kept in score order.

    /// ZADD one member (its score replaced if it is there): 1 when it was new.
    public func zadd(_ key: String, score: Double, member: String, reply: @escaping (Result<Int, RedisError>) -> Void) {
        send([bytes("ZADD"), bytes(key), bytes(Self.scoreText(score)), bytes(member)]) { reply(Self.integer($0, command: "ZADD")) }
    }

    public func zadd(_ key: String, score: Double, member: String) async throws(RedisError) -> Int {
        try await onLoop { [self] in zadd(key, score: score, member: member, reply: $0) }
    }

    /// ZRANGE `start` `stop` WITHSCORES by rank, lowest score first (negative ranks count from
    /// the highest: -1 is the last); empty when the key does not exist.
    public func zrange(
        _ key: String, from start: Int, to stop: Int, reply: @escaping (Result<[(member: String, score: Double)], RedisError>) -> Void
    ) {
        send([bytes("ZRANGE"), bytes(key), bytes("\(start)"), bytes("\(stop)"), bytes("WITHSCORES")]) { result in
            reply(result.flatMap { reply in
                // RESP2's flat shape: member, score, member, score, …
                guard let flat = reply.elements, flat.count % 2 == 0 else { return .failure(.unexpectedReply(command: "ZRANGE", reply: reply)) }
                var members: [(member: String, score: Double)] = []
                for index in stride(from: 0, to: flat.count, by: 2) {
                    guard let member = flat[index].string, let score = flat[index + 1].string.flatMap(Double.init) else {
                        return .failure(.unexpectedReply(command: "ZRANGE", reply: reply))
                    }
                    members.append((member, score))
                }
                return .success(members)
            })
        }
    }

    public func zrange(_ key: String, from start: Int = 0, to stop: Int = -1) async throws(RedisError) -> [(member: String, score: Double)] {
        try await onLoop { [self] in zrange(key, from: start, to: stop, reply: $0) }
    }

    /// ZREM: how many of `members` were in the set.
    public func zrem(_ key: String, _ members: [String], reply: @escaping (Result<Int, RedisError>) -> Void) {
        send([bytes("ZREM"), bytes(key)] + members.map(bytes)) { reply(Self.integer($0, command: "ZREM")) }
    }

    public func zrem(_ key: String, _ members: [String]) async throws(RedisError) -> Int {
        try await onLoop { [self] in zrem(key, members, reply: $0) }
    }

    /// XREAD BLOCK on the loop's thread (see the async `xread`), the entries as a callback there.
    public func xread(
        _ stream: String, after: RedisStreamID, count: Int? = nil, blockMilliseconds: Int,
        entries: @escaping (Result<[RedisStreamEntry], RedisError>) -> Void
    ) {
        var arguments = ["XREAD"]
        if let count { arguments += ["COUNT", "\(count)"] }
        arguments += ["BLOCK", "\(blockMilliseconds)", "STREAMS", stream, after.description]
        send(arguments.map(bytes), blockingFor: blockMilliseconds == 0 ? .max : Int64(blockMilliseconds)) { [self] result in
            entries(result.flatMap { reply in Result { () throws(RedisError) in try self.xreadEntries(reply) } })
        }
    }

    /// SET NX PX: sets `key` only if it does not exist, expiring after `milliseconds` (a lease).
    /// True when this call set it.
    public func setIfAbsent(_ key: String, to value: [UInt8], expiringAfter milliseconds: Int) async throws(RedisError) -> Bool {
        let reply = try await command(bytes: [bytes("SET"), bytes(key), value, bytes("NX"), bytes("PX"), bytes("\(milliseconds)")])
        switch reply {
        case .status("OK"): return true
        case .null: return false
        default: throw .unexpectedReply(command: "SET NX", reply: reply)
        }
    }

    public func get(_ key: String) async throws(RedisError) -> [UInt8]? {
        let reply = try await command(["GET", key])
        switch reply {
        case .bulk(let value): return value
        case .null: return nil
        default: throw .unexpectedReply(command: "GET", reply: reply)
        }
    }

    /// DEL: how many of `keys` existed.
    public func del(_ keys: [String]) async throws(RedisError) -> Int {
        try await integer(["DEL"] + keys, command: "DEL")
    }

    /// SADD: how many of `members` were not in the set yet.
    public func sadd(_ key: String, _ members: [String]) async throws(RedisError) -> Int {
        try await integer(["SADD", key] + members, command: "SADD")
    }

    /// SREM: how many of `members` were in the set.
    public func srem(_ key: String, _ members: [String]) async throws(RedisError) -> Int {
        try await integer(["SREM", key] + members, command: "SREM")
    }

    /// SMEMBERS: the set (empty when the key does not exist).
    public func smembers(_ key: String) async throws(RedisError) -> Set<String> {
        let reply = try await command(["SMEMBERS", key])
        guard let items = reply.elements else { throw .unexpectedReply(command: "SMEMBERS", reply: reply) }
        var members: Set<String> = []
        for item in items {
            guard let member = item.string else { throw .unexpectedReply(command: "SMEMBERS", reply: item) }
            members.insert(member)
        }
        return members
    }

    /// PTTL: milliseconds until `key` expires; nil when it does not exist, `.max` when it never expires.
    public func pttl(_ key: String) async throws(RedisError) -> Int64? {
        let reply = try await command(["PTTL", key])
        guard let milliseconds = reply.integer, milliseconds >= -2 else { throw .unexpectedReply(command: "PTTL", reply: reply) }
        switch milliseconds {
        case -2: return nil
        case -1: return .max
        default: return milliseconds
        }
    }

    /// PUBLISH: how many subscribers (on any node) received the message.
    public func publish(_ channel: String, _ message: [UInt8]) async throws(RedisError) -> Int {
        let reply = try await command(bytes: [bytes("PUBLISH"), bytes(channel), message])
        guard let count = reply.integer else { throw .unexpectedReply(command: "PUBLISH", reply: reply) }
        return Int(count)
    }

    /// WAIT: blocks until the writes of this connection reached `replicas` replicas or
    /// `timeoutMilliseconds` pass (0: forever); returns how many acknowledged them.
    public func wait(replicas: Int, timeoutMilliseconds: Int) async throws(RedisError) -> Int {
        let reply = try await command(["WAIT", "\(replicas)", "\(timeoutMilliseconds)"], blockingFor: timeoutMilliseconds == 0 ? .max : Int64(timeoutMilliseconds))
        guard let count = reply.integer else { throw .unexpectedReply(command: "WAIT", reply: reply) }
        return Int(count)
    }

    /// INFO `section` as its `name:value` lines.
    public func info(_ section: String = "default") async throws(RedisError) -> [String: String] {
        let reply = try await command(["INFO", section])
        guard let text = reply.string else { throw .unexpectedReply(command: "INFO", reply: reply) }
        var fields: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = String(line[line.index(after: colon)...])
        }
        return fields
    }

    private static func integer(_ result: Result<RedisReply, RedisError>, command name: String) -> Result<Int, RedisError> {
        result.flatMap { reply in reply.integer.map { .success(Int($0)) } ?? .failure(.unexpectedReply(command: name, reply: reply)) }
    }

    /// A score as Redis reads it back exactly: integral scores (log positions) without a fraction.
    private static func scoreText(_ score: Double) -> String {
        score == score.rounded() && abs(score) < 1e15 ? "\(Int64(score))" : "\(score)"
    }

    /// The any-thread form of a loop-thread command: `body` runs on the loop, its reply is awaited.
    private func onLoop<Value: Sendable>(_ body: @escaping @Sendable (@escaping (Result<Value, RedisError>) -> Void) -> Void) async throws(RedisError) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, RedisError>, Never>) in
            loop.execute { body { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }

    private func integer(_ arguments: [String], command name: String) async throws(RedisError) -> Int {
        let reply = try await command(arguments)
        guard let value = reply.integer else { throw .unexpectedReply(command: name, reply: reply) }
        return Int(value)
    }

    private func entries(_ reply: RedisReply, command name: String) throws(RedisError) -> [RedisStreamEntry] {
        guard let items = reply.elements else { throw .unexpectedReply(command: name, reply: reply) }
        var entries: [RedisStreamEntry] = []
        for item in items {
            guard let entry = RedisStreamEntry(reply: item) else { throw .unexpectedReply(command: name, reply: item) }
            entries.append(entry)
        }
        return entries
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
