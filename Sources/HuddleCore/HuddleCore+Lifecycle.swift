/// Connections coming and going, the HTTP API's disconnect, presence announcements and the
/// periodic tick.
extension HuddleCore {
    /// Forgets a connection: its subscriptions, its logins being verified, and its share of its
    /// user's presence (the last one starts the grace period). Unknown connections are ignored,
    /// so the server's `connectionClosed` after a core-initiated close is harmless.
    func forget(_ connection: ConnectionRef, at time: Int64) {
        readersBehind.remove(connection)
        guard let state = connections.close(connection) else { return }
        subscriptions.removeAll(of: connection)
        for login in state.pendingLogins {
            loginThrottle.endVerification(account: login.account, address: login.address)
        }
        if let identity = state.identity {
            sessionsSeen.saw(identity.tokenHash, at: time)
            if !connections.hasConnections(of: identity.username) { presence.userDisconnected(identity.username, at: time) }
        }
    }

    /// HTTP API: closes the user's live connections with 4001; their sessions stay valid.
    func disconnectUser(requestID: String, username rawUsername: String, at time: Int64, into step: inout CoreStep) {
        guard let username = UsernameRules.canonical(rawUsername) else {
            return fail(nil, requestID, CoreError(.badRequest, "user must be a username"), into: &step)
        }
        guard durableState.accounts[username] != nil else {
            return fail(nil, requestID, CoreError(.badRequest, "no user \(username)"), into: &step)
        }
        let closing = connections.connections(of: username)
        close(closing, reason: "disconnected by the server", at: time, into: &step)
        reply(nil, requestID, .disconnected(count: closing.count), into: &step)
    }

    /// Tells the user's friends' live connections; nothing when nobody would receive it.
    func announcePresence(of user: Username, online: Bool, into step: inout CoreStep) {
        let friends = friends(of: user)
        guard !friends.isEmpty else { return }
        let recipients = connections.connections(ofAnyOf: friends)
        if !recipients.isEmpty { step.outputs.append(.presenceChanged(user: user, online: online, to: recipients)) }
    }

    /// The node-local part (`tickLocally`), then the durable one: purges sessions expired long
    /// enough ago, trims expired history and forgets expired kept results, each a command.
    func tick(at time: Int64, into step: inout CoreStep) {
        tickLocally(at: time, into: &step)
        var purgeable = Set<[UInt8]>()
        while let next = sessionPurges.min, next.time <= time {
            _ = sessionPurges.popMin()
            // Skip entries of sessions revoked (or replaced) since they were scheduled.
            if let session = durableState.sessions[next.tokenHash], purgeTime(of: session) == next.time {
                purgeable.insert(next.tokenHash)
            }
        }
        if !purgeable.isEmpty {
            let tokenHashes = purgeable.sorted(by: Sessions.precedes)
            record(.purgeExpiredSessions(tokenHashes: tokenHashes, time: time), into: &step)
        }
        trimExpiredHistory(at: time, into: &step)
        if time >= nextKeptResultSweep {
            nextKeptResultSweep = time + configuration.keptResultSweepMilliseconds
            if !durableState.keptResults.isEmpty {
                record(.forgetKeptResults(before: time - configuration.keptResultMilliseconds, time: time), into: &step)
            }
        }
    }

    /// What only this node's connections and throttles need, and no other node decides: ends
    /// presence grace periods, closes connections whose session expired, forgets login
    /// failures and other throttle entries that left their window. Alone it is
    /// `CoreRequest.localTick`: in cluster mode, what a node not holding the ticker lease runs,
    /// while the durable part comes from the ticker's log entries.
    func tickLocally(at time: Int64, into step: inout CoreStep) {
        for user in presence.expire(at: time) {
            localPresenceChanged(of: user, online: false, into: &step)
        }
        closeExpiredConnections(at: time, into: &step)
        loginThrottle.purge(at: time)
        friendRequestThrottle.purge(at: time)
        passwordResetThrottle.purge(at: time)
        roomQuota.purge(at: time)
    }

    /// A connection signed in with a session that has since expired is closed (4001, like a
    /// revoked one): a token stops granting access at `expires_at` whether it is presented
    /// again or was presented before.
    private func closeExpiredConnections(at time: Int64, into step: inout CoreStep) {
        var expired: [[UInt8]] = []
        while let next = sessionExpiries.min, next.time <= time {
            _ = sessionExpiries.popMin()
            expired.append(next.tokenHash)
        }
        guard !expired.isEmpty else { return }
        let closing = connections.connections(usingSessions: expired).filter { (connections[$0]?.identity?.expiresAt ?? .max) <= time }
        close(closing, reason: "session expired", at: time, into: &step)
    }
}
