/// When a session may be forgotten: its expiry plus the retention during which `auth` still
/// answers `token_expired`. Ordered by time, then token hash, so purges are deterministic.
struct SessionPurge: Comparable, Sendable {
    var time: Int64
    var tokenHash: [UInt8]

    static func < (lhs: SessionPurge, rhs: SessionPurge) -> Bool {
        lhs.time != rhs.time ? lhs.time < rhs.time : Sessions.precedes(lhs.tokenHash, rhs.tokenHash)
    }
}
