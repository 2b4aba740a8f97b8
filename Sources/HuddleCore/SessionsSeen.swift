/// When this node last saw each session sign in or disconnect (ephemeral): what `sessions`
/// shows as last seen until `recordSessionsSeen` logs it. One entry per session, dropped when
/// logged or when its session is gone, so it never outgrows the sessions that exist.
struct SessionsSeen: Sendable {
    private(set) var byTokenHash: [[UInt8]: Int64] = [:]

    mutating func saw(_ tokenHash: [UInt8], at time: Int64) {
        if time > byTokenHash[tokenHash] ?? .min { byTokenHash[tokenHash] = time }
    }

    subscript(tokenHash: [UInt8]) -> Int64? { byTokenHash[tokenHash] }

    mutating func forget(_ tokenHash: [UInt8]) { byTokenHash[tokenHash] = nil }
}
