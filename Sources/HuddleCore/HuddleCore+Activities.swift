import HuddleProtocol

/// Activities (protocol.md, "Activities and matches"): a user turns an activity from the
/// configured list on — for every friend or for chosen ones, until it expires — or off, and
/// lists the list and their own statuses. What statuses do to matches is in
/// `HuddleCore+Matches.swift`.
///
/// A status whose time is up counts as off at once, before `expireActivities` (sent with every
/// tick) clears it: the reads filter
/// by the request's time, and the writes first clear (by commands) everything that ran out,
/// so they decide on the state as it is at their time.
extension HuddleCore {
    func listActivities(_ connection: ConnectionRef, requestID: String, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let mine = liveStatuses(of: identity.username, at: time)
        reply(connection, requestID, .activities(available: configuration.activities.names, mine: mine), into: &step)
    }

    func activityOn(
        _ connection: ConnectionRef, requestID: String, activity text: String, friends chosen: [String]?, expiresInSeconds: Int64?,
        at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let me = identity.username
        let settings = configuration.activities
        guard let activity = settings.canonicalName(of: text) else {
            return fail(connection, requestID, unknownActivity(text), into: &step)
        }
        var lifetime = settings.defaultExpiryMilliseconds
        if let expiresInSeconds {
            let longest = settings.maxExpiryMilliseconds / 1000
            guard (1...max(longest, 1)).contains(expiresInSeconds) else {
                return fail(connection, requestID, CoreError(.badRequest, "expires_in must be 1 to \(longest) seconds"), into: &step)
            }
            lifetime = expiresInSeconds * 1000
        }
        var audience: [Username]?
        if let chosen {
            let myFriends = friends(of: me)
            var admitted = Set<Username>()
            var strangers: [String] = []
            for name in chosen {
                if let friend = UsernameRules.canonical(name), myFriends.contains(friend) {
                    admitted.insert(friend)
                } else if !strangers.contains(name) {
                    strangers.append(name)
                }
            }
            guard strangers.isEmpty else {
                let names = strangers.joined(separator: ", ")
                return fail(connection, requestID, CoreError(.notFriends, "not your friends: \(names)"), into: &step)
            }
            audience = admitted.sorted()
        }
        expireActivities(at: time, into: &step)
        record(.setActivity(user: me, activity: activity, audience: audience, expiresAt: time + lifetime, time: time), into: &step)
        // Turning on again can only end a match by leaving its partner out of the audience.
        updateMatches(of: me, endingWith: .audience, at: time, into: &step)
        // The command above has just set it.
        let status = durableState.activityStatuses.status(of: me, activity: activity)!
        reply(connection, requestID, .activityStatus(status), into: &step)
    }

    func activityOff(_ connection: ConnectionRef, requestID: String, activity text: String, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let me = identity.username
        // An activity taken off the list since it was turned on can still be turned off.
        let folded = text.lowercased()
        guard let activity = configuration.activities.canonicalName(of: text)
            ?? durableState.activityStatuses.statuses(of: me).keys.first(where: { $0.lowercased() == folded })
        else { return fail(connection, requestID, unknownActivity(text), into: &step) }
        // What ran out is cleared first (with its match_ended notices, as `expireActivities` would), so an
        // expired status is refused here like one never turned on.
        expireActivities(at: time, into: &step)
        guard durableState.activityStatuses.status(of: me, activity: activity) != nil else {
            return fail(connection, requestID, CoreError(.notOn, "\(activity) is not on"), into: &step)
        }
        record(.clearActivity(user: me, activity: activity, reason: .off, time: time), into: &step)
        updateMatches(of: me, endingWith: .off, at: time, into: &step)
        reply(connection, requestID, .done, into: &step)
    }

    /// Clears every status that has run out by `time`, then ends the matches that relied on
    /// them. Run by `CoreRequest.expireActivities`, and by every request that changes statuses
    /// before it decides.
    func expireActivities(at time: Int64, into step: inout CoreStep) {
        let expired = durableState.activityStatuses.popExpired(at: time)
        guard !expired.isEmpty else { return }
        for expiry in expired {
            record(.clearActivity(user: expiry.user, activity: expiry.activity, reason: .expired, time: time), into: &step)
        }
        for user in Set(expired.map(\.user)).sorted() {
            updateMatches(of: user, endingWith: .expired, at: time, into: &step)
        }
    }

    /// The user's statuses that are on at `time`, in the list's order (activities no longer
    /// listed last, by name).
    func liveStatuses(of user: Username, at time: Int64) -> [ActivityStatus] {
        let order = activityOrder()
        return durableState.activityStatuses.statuses(of: user).values.filter { $0.isOn(at: time) }.sorted {
            order($0.activity, $1.activity)
        }
    }

    /// Orders activity names as the configured list does; names no longer listed come last,
    /// by name.
    func activityOrder() -> (String, String) -> Bool {
        let names = configuration.activities.names
        var rank: [String: Int] = [:]
        for (index, name) in names.enumerated() { rank[name] = index }
        return { lhs, rhs in
            let (left, right) = (rank[lhs] ?? names.count, rank[rhs] ?? names.count)
            return left != right ? left < right : lhs < rhs
        }
    }

    private func unknownActivity(_ text: String) -> CoreError {
        let shown = text.unicodeScalars.count <= 32 ? text : String(text.unicodeScalars.prefix(32)) + "…"
        let names = configuration.activities.names.joined(separator: ", ")
        return CoreError(.unknownActivity, "no activity \"\(shown)\"; the activities are \(names)")
    }
}
