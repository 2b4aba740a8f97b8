import Synchronization

/// The identity verifier's counters for `GET /metrics`. Refusals are also counted by code in
/// `huddle_errors_total`, like every error reply.
final class IdentityMetrics: Sendable {
    enum Kind: String, CaseIterable, Sendable { case idToken = "id_token", appToken = "app_token" }
    enum Outcome: String, CaseIterable, Sendable { case verified, refused }
    enum KeyRefresh: String, CaseIterable, Sendable { case loaded, failed, rateLimited = "rate_limited" }

    final class KeyRefreshes: Sendable {
        private let counts = Mutex<[KeyRefresh: Int]>([:])
        func add(_ outcome: KeyRefresh) { counts.withLock { $0[outcome, default: 0] += 1 } }
        func count(_ outcome: KeyRefresh) -> Int { counts.withLock { $0[outcome] ?? 0 } }
    }

    private let verifications = Mutex<[String: Int]>([:])
    let keyRefreshes = KeyRefreshes()
    /// Verifications queued or running on the verifier threads.
    let pending = Atomic<Int>(0)

    init() {}

    func count(_ kind: Kind, _ outcome: Outcome) {
        verifications.withLock { $0["kind=\"\(kind.rawValue)\",outcome=\"\(outcome.rawValue)\"", default: 0] += 1 }
    }

    func prometheusText() -> String {
        var text = "# HELP huddle_identity_verifications_total ID tokens and app tokens checked, by kind and outcome.\n"
        text += "# TYPE huddle_identity_verifications_total counter\n"
        let counts = verifications.withLock { $0 }
        for kind in Kind.allCases {
            for outcome in Outcome.allCases {
                let labels = "kind=\"\(kind.rawValue)\",outcome=\"\(outcome.rawValue)\""
                text += "huddle_identity_verifications_total{\(labels)} \(counts[labels] ?? 0)\n"
            }
        }
        text += "# HELP huddle_identity_key_refreshes_total Loads of an issuer's JWKS (at first use and on an unknown kid), and those skipped by the refresh interval.\n"
        text += "# TYPE huddle_identity_key_refreshes_total counter\n"
        for outcome in KeyRefresh.allCases {
            text += "huddle_identity_key_refreshes_total{outcome=\"\(outcome.rawValue)\"} \(keyRefreshes.count(outcome))\n"
        }
        text += "# HELP huddle_identity_verifications_pending Token verifications queued or running.\n"
        text += "# TYPE huddle_identity_verifications_pending gauge\n"
        text += "huddle_identity_verifications_pending \(pending.load(ordering: .relaxed))\n"
        return text
    }
}
