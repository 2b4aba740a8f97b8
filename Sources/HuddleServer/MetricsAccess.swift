import HuddleCrypto
import HuddleWebSocket

/// Who may read `/metrics` (`--metrics-token`): anyone when no token is set (a loopback or
/// private address), else only a request with `Authorization: Bearer TOKEN` — the load, error
/// rates and build of a server on a public address are not for everyone.
struct MetricsAccess: Sendable {
    let token: [UInt8]?

    init(token: String?) { self.token = token.map { Array($0.utf8) } }

    func allows(_ head: HTTPRequestHead) -> Bool {
        guard let token else { return true }
        guard let authorization = head.headers[first: "authorization"] else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        // Constant time: the comparison must not tell an attacker how much of a guess was right.
        return parts.count == 2 && parts[0].lowercased() == "bearer" && Crypto.constantTimeEquals(Array(parts[1].utf8), token)
    }
}
