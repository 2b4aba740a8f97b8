import HuddleProtocol

/// The first results of keyed writes (protocol.md, "Retries"), per user: a retry with the same
/// op and `client_id` while its result is kept gets that result again and changes nothing.
///
/// Bounded per user by count and by age (`CoreConfiguration.keptResultsPerUser` and
/// `keptResultMilliseconds`): `keep` trims both, and `forget(before:)` — logged by `tick`
/// every `keptResultSweepMilliseconds` — drops what expired for users who stopped writing. So a
/// replay of the same log with the same configuration keeps exactly the same results. Coded as a list sorted by user, each user's
/// results oldest first.
public struct KeptResults: Sendable, Equatable {
    private var resultsByUser: [Username: [KeptResult]] = [:]

    public init() {}

    /// The kept result of `user`'s `op` with `clientID`, unless older than `window` at `time`.
    func result(of user: Username, op: String, clientID: String, at time: Int64, window: Int64) -> CoreReply? {
        guard let kept = resultsByUser[user]?.last(where: { $0.op == op && $0.clientID == clientID }),
              time - kept.time <= window
        else { return nil }
        return kept.reply
    }

    /// Whether any result is kept.
    var isEmpty: Bool { resultsByUser.isEmpty }

    /// Forgets every result older than `cutoff`.
    mutating func forget(before cutoff: Int64) {
        for (user, results) in resultsByUser {
            let expired = results.prefix { $0.time < cutoff }.count
            guard expired > 0 else { continue }
            resultsByUser[user] = expired == results.count ? nil : Array(results.dropFirst(expired))
        }
    }

    /// Results kept for `user` now.
    public func count(of user: Username) -> Int {
        resultsByUser[user]?.count ?? 0
    }

    /// Keeps `result`, then forgets the user's results beyond `limit` or older than `window`
    /// (oldest first).
    mutating func keep(_ result: KeptResult, of user: Username, limit: Int, window: Int64) {
        var results = resultsByUser[user] ?? []
        results.append(result)
        let expired = results.prefix { result.time - $0.time > window }.count
        let excess = max(0, results.count - expired - limit)
        results.removeFirst(min(results.count, expired + excess))
        resultsByUser[user] = results.isEmpty ? nil : results
    }

    /// Account deletion: the user's kept results.
    mutating func erase(_ user: Username) {
        resultsByUser[user] = nil
    }
}

/// One kept result: what a keyed write answered the first time.
public struct KeptResult: Sendable, Equatable {
    /// The wire op (`post`, `like`, …): a `client_id` names a write of one op only.
    public var op: String
    public var clientID: String
    public var reply: CoreReply
    public var time: Int64
}

/// `{user, results}` objects by user, each user's results oldest first.
extension KeptResults: PersistedValue {
    var persisted: JSONValue {
        .array(resultsByUser.keys.sorted().map { .record([("user", $0.persisted), ("results", resultsByUser[$0]!.persisted)]) })
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for f in try PersistedFields.objects(persisted, "UserResults") {
            let user: Username = try f("user")
            guard resultsByUser[user] == nil else { throw RecordDecodingError("kept results of \(user) appear twice") }
            resultsByUser[user] = try f("results")
        }
    }
}
