import HuddleProtocol

/// Matches (protocol.md, "Activities and matches"): two friends match on an activity when each
/// has a status on that the other is in the audience of, and the two are the same activity or
/// one of them is "Anything" (it matches every activity; the match is then on the other one,
/// and on "Anything" when both are).
///
/// Matches in force are durable (`ActivityMatches`); whenever a user's statuses or friendships
/// change, `updateMatches` compares them with what the statuses now give and logs the
/// difference, telling both users through their inboxes (`match`, `match_ended`). A match that
/// stays in force is never told again. Nobody but the two learns anything.
extension HuddleCore {
    func listMatches(_ connection: ConnectionRef, requestID: String, byActivity: Bool, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let me = identity.username
        var list: [ActivityMatch] = []
        for partner in durableState.activityMatches.partners(of: me) {
            // A match resting on a status that ran out is over, even if `expireActivities` has not run yet.
            let inForce = matchingActivities(me, partner, at: time)
            for (activity, since) in durableState.activityMatches.activities(between: me, and: partner) where inForce.contains(activity) {
                list.append(ActivityMatch(user: partner, activity: activity, since: since))
            }
        }
        let order = activityOrder()
        let newestFirst = { (lhs: ActivityMatch, rhs: ActivityMatch) -> Bool in
            if lhs.since != rhs.since { return lhs.since > rhs.since }
            if lhs.activity != rhs.activity { return order(lhs.activity, rhs.activity) }
            return lhs.user < rhs.user
        }
        if byActivity {
            list.sort { $0.activity != $1.activity ? order($0.activity, $1.activity) : newestFirst($0, $1) }
        } else {
            list.sort(by: newestFirst)
        }
        reply(connection, requestID, .matches(list), into: &step)
    }

    /// Brings the user's matches in line with the statuses and friendships as they are at
    /// `time`: ends those no longer given (`reason` says why) and starts the new ones, each
    /// told to both sides. Looks only at the user's friends who have statuses and at the
    /// partners of matches in force: O(friends × activities), never a scan of all users.
    func updateMatches(of user: Username, endingWith reason: ActivityEndReason, at time: Int64, into step: inout CoreStep) {
        let statuses = durableState.activityStatuses
        var partners = Set<Username>()
        if statuses.hasStatuses(user) { partners = friends(of: user).filter(statuses.hasStatuses) }
        partners.formUnion(durableState.activityMatches.partners(of: user))
        for partner in partners.sorted() {
            let wanted = matchingActivities(user, partner, at: time)
            let current = durableState.activityMatches.activities(between: user, and: partner)
            for activity in current.keys.sorted() where !wanted.contains(activity) {
                endMatch(user, partner, activity: activity, reason: reason, at: time, into: &step)
            }
            for activity in wanted.sorted() where current[activity] == nil {
                startMatch(user, partner, activity: activity, at: time, into: &step)
            }
        }
    }

    /// `befriend`'s part in activities: new friends whose statuses on admit each other match
    /// at once (they had no match before: matches are only between friends).
    func startActivityMatches(between user: Username, and friend: Username, at time: Int64, into step: inout CoreStep) {
        for activity in matchingActivities(user, friend, at: time).sorted() {
            startMatch(user, friend, activity: activity, at: time, into: &step)
        }
    }

    /// `removeFriend`'s part in activities, once the friendship is gone: each one leaves the
    /// other's chosen audiences, and their matches end (`unfriended`).
    /// Statuses that ran out are left to `expireActivities`: clearing them here would end this pair's
    /// matches as `expired` rather than `unfriended`.
    func endActivities(between user: Username, and former: Username, at time: Int64, into step: inout CoreStep) {
        for (owner, other) in [(user, former), (former, user)] {
            let statuses = durableState.activityStatuses.statuses(of: owner)
            for activity in statuses.keys.sorted() {
                guard let status = statuses[activity], let audience = status.audience, status.admits(other) else { continue }
                record(.setActivity(
                    user: owner, activity: activity, audience: audience.filter { $0 != other }, expiresAt: status.expiresAt, time: time
                ), into: &step)
            }
        }
        for activity in durableState.activityMatches.activities(between: user, and: former).keys.sorted() {
            endMatch(user, former, activity: activity, reason: .unfriended, at: time, into: &step)
        }
    }

    /// The activities the two match on at `time` (empty unless they are friends).
    func matchingActivities(_ user: Username, _ partner: Username, at time: Int64) -> Set<String> {
        guard durableState.friendships.areFriends(user, partner) else { return [] }
        let offered = offers(of: user, to: partner, at: time)
        guard !offered.isEmpty else { return [] }
        let answered = offers(of: partner, to: user, at: time)
        guard !answered.isEmpty else { return [] }
        var together = offered.intersection(answered)
        if let anything = configuration.activities.wildcard {
            if offered.contains(anything) { together.formUnion(answered) }
            if answered.contains(anything) { together.formUnion(offered) }
        }
        return together
    }

    /// The activities `user` has on at `time` with `friend` in their audience.
    private func offers(of user: Username, to friend: Username, at time: Int64) -> Set<String> {
        var activities = Set<String>()
        for status in durableState.activityStatuses.statuses(of: user).values where status.isOn(at: time) && status.admits(friend) {
            activities.insert(status.activity)
        }
        return activities
    }

    /// Logs the match (users in byte order) and tells both: `match` with the other's name.
    private func startMatch(_ user: Username, _ partner: Username, activity: String, at time: Int64, into step: inout CoreStep) {
        let (first, second) = user < partner ? (user, partner) : (partner, user)
        record(.startMatch(user: first, partner: second, activity: activity, time: time), into: &step)
        for (recipient, other) in [(first, second), (second, first)] {
            publishNotice(.match(user: other, activity: activity), to: recipient, at: time, into: &step)
            notifyOfflineOfMatch(recipient, with: other, activity: activity, at: time, into: &step)
        }
    }

    /// Logs the end of the match and tells both: `match_ended` with the other's name and why.
    private func endMatch(
        _ user: Username, _ partner: Username, activity: String, reason: ActivityEndReason, at time: Int64, into step: inout CoreStep
    ) {
        let (first, second) = user < partner ? (user, partner) : (partner, user)
        record(.endMatch(user: first, partner: second, activity: activity, reason: reason, time: time), into: &step)
        for (recipient, other) in [(first, second), (second, first)] {
            let notice = InboxNotice.matchEnded(user: other, activity: activity, reason: MatchEndReason(reason.rawValue))
            publishNotice(notice, to: recipient, at: time, into: &step)
        }
    }
}
