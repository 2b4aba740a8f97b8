import HuddleProtocol

/// Sessions (protocol.md, "Sessions"): a user lists their signed-in devices and revokes one
/// by its id, which is not its token: the first 8 bytes of the token's SHA-256, in hex. The
/// core knows only that hash, so an id can name a session but never be used as a token.
extension HuddleCore {
    /// The most sessions `sessions` lists (the most recently seen first); `total` says how many there are.
    static let maxListedSessions = 100

    static let sessionsSeenSweepMilliseconds: Int64 = 60_000

    static func sessionID(of tokenHash: [UInt8]) -> String {
        Hex.encode(Array(tokenHash.prefix(8)))
    }

    func listSessions(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let hashes = durableState.sessions.tokenHashes(of: identity.username)
        let entries = hashes.compactMap { hash -> SessionEntry? in
            guard let session = durableState.sessions[hash] else { return nil }
            return SessionEntry(
                id: Self.sessionID(of: hash), device: session.device, createdAt: session.createdAt, lastSeenAt: lastSeen(of: session),
                expiresAt: session.expiresAt, connected: !connections.connections(usingSessions: [hash]).isEmpty,
                current: hash == identity.tokenHash)
        }
        // Most recently seen first; the id orders equal times, so the list is the same each time.
        let sorted = entries.sorted { ($0.lastSeenAt, $1.id) > ($1.lastSeenAt, $0.id) }
        reply(connection, requestID, .sessions(Array(sorted.prefix(Self.maxListedSessions)), total: entries.count), into: &step)
    }

    /// Revokes one of the caller's sessions by id; its connections close with 4001 (here and, in
    /// cluster mode, on every node: `tellLive` of the same `revokeSessions` a logout logs).
    func revokeSession(_ connection: ConnectionRef, requestID: String, id: String, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let lowered = id.lowercased()
        guard let tokenHash = durableState.sessions.tokenHashes(of: identity.username).first(where: { Self.sessionID(of: $0) == lowered }) else {
            return fail(connection, requestID, CoreError(.sessionNotFound, "no session \(id) of yours"), into: &step)
        }
        let command = CoreCommand.revokeSessions(username: identity.username, tokenHashes: [tokenHash], time: time)
        record(command, into: &step)
        reply(connection, requestID, .revoked(count: 1), into: &step)
        tellLive(after: command, at: time, into: &step)
    }

    /// The session's last sign-in or disconnect: the logged one, or a later one this node saw.
    func lastSeen(of session: SessionRecord) -> Int64 {
        max(session.lastSeenAt, sessionsSeen[session.tokenHash] ?? .min)
    }

    /// Logs the last seen of every session seen here whose logged one is older than the
    /// interval; forgets the entries of sessions gone and of those logged. Looks at most once
    /// a minute (`sessionsSeenSweepMilliseconds`), so the scan of the entries costs little.
    func recordSessionsSeen(at time: Int64, into step: inout CoreStep) {
        guard time >= nextSessionsSeenSweep else { return }
        nextSessionsSeenSweep = time + Self.sessionsSeenSweepMilliseconds
        var due: [([UInt8], Username, Int64)] = []
        var gone: [[UInt8]] = []
        for (tokenHash, time) in sessionsSeen.byTokenHash {
            guard let session = durableState.sessions[tokenHash] else {
                gone.append(tokenHash)
                continue
            }
            if time - session.lastSeenAt >= configuration.sessionSeenIntervalMilliseconds { due.append((tokenHash, session.username, time)) }
        }
        for tokenHash in gone { sessionsSeen.forget(tokenHash) }
        for (tokenHash, username, time) in due.sorted(by: { Sessions.precedes($0.0, $1.0) }) {
            record(.seeSession(username: username, tokenHash: tokenHash, time: time), into: &step)
            sessionsSeen.forget(tokenHash)
        }
    }
}
