import HuddleCore
import HuddleRedis

/// Cluster mode (issue 14): login attempts limited across every node, asked on the core's
/// thread before a login's password is hashed (`CoreRunner.verifyPassword`), so that an
/// attacker cannot multiply its guesses by the node count. Nil in single-node mode, where the
/// core's own `LoginThrottle` is the whole limit (each node keeps it in cluster mode too).
struct SharedLoginThrottle: Sendable {
    enum Admission: Sendable, Equatable {
        case allowed
        case refused(retryAfterMilliseconds: Int64)
        /// The shared limit cannot be asked: the login is refused (`unavailable`), never let
        /// through unlimited.
        case unavailable
    }

    /// Runs on the core's loop and answers there.
    var admit: @Sendable (_ account: String, _ address: String, _ answer: @escaping (Admission) -> Void) -> Void
    /// A login succeeded: what it took is given back (best effort). Runs on the core's loop.
    var succeeded: @Sendable (_ account: String, _ address: String) -> Void
}

extension SharedLoginThrottle {
    /// Through Redis; `throttle.client` must run on the core's loop.
    init(_ throttle: RedisLoginThrottle) {
        admit = { account, address, answer in
            throttle.admit(account: account, address: address) { outcome in
                switch outcome {
                case .success(.allowed): answer(.allowed)
                case .success(.refused(let wait)): answer(.refused(retryAfterMilliseconds: wait))
                case .failure: answer(.unavailable)
                }
            }
        }
        succeeded = { account, address in throttle.succeeded(account: account, address: address) }
    }
}

extension RedisLoginThrottle.Limits {
    /// The core's `LoginThrottle` limits as token buckets: as many attempts at once as the core
    /// allows failures, refilled at the rate its window lets them go (the pair's and the
    /// address's), and an account's attempts spaced by the core's backoff once its allowance is
    /// spent.
    init(_ configuration: CoreConfiguration) {
        let window = configuration.loginFailureWindowMilliseconds
        func spread(_ count: Int) -> Int64 { (window + Int64(max(count, 1)) - 1) / Int64(max(count, 1)) }
        self.init(
            perAccountAndAddress: .init(
                capacity: configuration.loginFailuresPerAccountAndAddress, refillMilliseconds: spread(configuration.loginFailuresPerAccountAndAddress)),
            perAddress: .init(capacity: configuration.loginFailuresPerAddress, refillMilliseconds: spread(configuration.loginFailuresPerAddress)),
            perAccount: .init(capacity: configuration.loginFailuresPerAccount, refillMilliseconds: configuration.loginAccountBackoffMilliseconds))
    }
}
