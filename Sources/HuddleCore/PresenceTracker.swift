/// The grace period of friend presence (protocol.md, `presence` event): a user whose last
/// connection closed stays online for the grace period, so a phone switching networks does not
/// flap. The live connections themselves are in `ConnectionRegistry`; this keeps only the users
/// in grace and when each grace ends (ephemeral).
struct PresenceTracker: Sendable {
    private struct GraceEnd: Comparable, Sendable {
        var time: Int64
        var user: Username

        static func < (lhs: GraceEnd, rhs: GraceEnd) -> Bool {
            (lhs.time, lhs.user) < (rhs.time, rhs.user)
        }
    }

    let graceMilliseconds: Int64
    private var graceEnds: [Username: Int64] = [:]
    /// May hold ends that no longer count (the user came back); `graceEnds` is the truth.
    private var queue = MinHeap<GraceEnd>()

    init(graceMilliseconds: Int64) {
        self.graceMilliseconds = graceMilliseconds
    }

    var usersInGrace: Int { graceEnds.count }

    func isInGrace(_ user: Username) -> Bool {
        graceEnds[user] != nil
    }

    /// The user got a connection after having none. Returns true if they come online (they
    /// were not in grace: friends are told); false if this ends their grace silently.
    mutating func userConnected(_ user: Username) -> Bool {
        graceEnds.removeValue(forKey: user) == nil
    }

    /// The user's last connection closed at `time`.
    mutating func userDisconnected(_ user: Username, at time: Int64) {
        let end = time + graceMilliseconds
        graceEnds[user] = end
        queue.push(GraceEnd(time: end, user: user))
    }

    /// Users whose grace ended at or before `time`, now offline; in order of grace end, then name.
    mutating func expire(at time: Int64) -> [Username] {
        var offline: [Username] = []
        while let next = queue.min, next.time <= time {
            _ = queue.popMin()
            if graceEnds[next.user] == next.time {
                graceEnds[next.user] = nil
                offline.append(next.user)
            }
        }
        return offline
    }
}
