/// When a status runs out: an entry of `ActivityStatuses`' expiry queue. Ordered by time, then
/// user, then activity, so expiries due at once are handled in the same order on every run.
struct ActivityExpiry: Comparable, Hashable, Sendable {
    var time: Int64
    var user: Username
    var activity: String

    static func < (lhs: ActivityExpiry, rhs: ActivityExpiry) -> Bool {
        (lhs.time, lhs.user, lhs.activity) < (rhs.time, rhs.user, rhs.activity)
    }
}
