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
        var arguments = ["XRANGE", stream, start?.description ?? "-", end?.description ?? "+"]
        if let count { arguments += ["COUNT", "\(count)"] }
        let reply = try await command(arguments)
        return try entries(reply, command: "XRANGE")
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

    /// XRANGE on the loop's thread, the entries (or why not) as a callback there.
    public func xrange(
        _ stream: String, from start: RedisStreamID? = nil, to end: RedisStreamID? = nil, count: Int? = nil,
        entries: @escaping (Result<[RedisStreamEntry], RedisError>) -> Void
    ) {
        var arguments = ["XRANGE", stream, start?.description ?? "-", end?.description ?? "+"]
        if let count { arguments += ["COUNT", "\(count)"] }
        send(arguments.map(bytes)) { [self] result in
            entries(result.flatMap { reply in Result { () throws(RedisError) in try self.entries(reply, command: "XRANGE") } })
        }
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
