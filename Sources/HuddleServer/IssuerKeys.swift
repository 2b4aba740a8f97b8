import HuddleCore
import HuddleCrypto
import HuddleIO
import Synchronization

/// One issuer's signing keys (its JWKS), loaded when first needed and reloaded when a token
/// names a key id the set does not hold (a key rotation), at most once per refresh interval:
/// a flood of made-up `kid`s costs one reload per interval, not one per token.
final class IssuerKeys: Sendable {
    private struct State {
        var keys: JSONWebKeySet?
        var lastLoad: Int64?
        var lastError: String?
    }

    let issuer: String
    private let source: String
    private let refreshIntervalMilliseconds: Int64
    private let fetch: @Sendable (String) -> Result<[UInt8], IdentitySettingsError>
    private let state = Mutex(State())
    private let metrics: IdentityMetrics

    init(
        issuer: String, source: String, refreshIntervalMilliseconds: Int64, metrics: IdentityMetrics,
        fetch: @escaping @Sendable (String) -> Result<[UInt8], IdentitySettingsError>
    ) {
        self.issuer = issuer
        self.source = source
        self.refreshIntervalMilliseconds = refreshIntervalMilliseconds
        self.metrics = metrics
        self.fetch = fetch
    }

    /// The key `keyID` names, reloading the set if it is unknown and the last load is old enough.
    /// Runs on a verifier thread: a reload blocks only that thread.
    func key(for keyID: String?, now: Int64) -> Result<JSONWebKey, CoreError> {
        if let key = state.withLock({ $0.keys?.key(for: keyID) }) { return .success(key) }
        let mayReload = state.withLock { state in
            guard state.lastLoad.map({ now - $0 >= refreshIntervalMilliseconds }) ?? true else { return false }
            state.lastLoad = now
            return true
        }
        if mayReload {
            reload()
        } else {
            metrics.keyRefreshes.add(.rateLimited)
        }
        return state.withLock { state in
            if let key = state.keys?.key(for: keyID) { return .success(key) }
            let named = keyID.map { "key \"\($0)\"" } ?? "key (the token names none)"
            if state.keys == nil {
                // Another verifier thread may be loading them for the first time.
                let why = state.lastError.map { "cannot be loaded (\($0))" } ?? "are still being loaded"
                return .failure(CoreError(.unknownKey, "the issuer's keys \(why); try again later"))
            }
            return .failure(CoreError(.unknownKey, "the issuer's key set has no \(named): a stale or foreign key"))
        }
    }

    private func reload() {
        let outcome = fetch(source).flatMap { bytes -> Result<JSONWebKeySet, IdentitySettingsError> in
            do { return .success(try JSONWebKeySet(json: bytes)) } catch { return .failure(IdentitySettingsError("\(error)")) }
        }
        state.withLock { state in
            switch outcome {
            case .success(let keys):
                state.keys = keys
                state.lastError = nil
            case .failure(let error):
                // The keys loaded before stay: a provider's outage must not sign everyone out.
                state.lastError = error.reason
            }
        }
        switch outcome {
        case .success: metrics.keyRefreshes.add(.loaded)
        case .failure: metrics.keyRefreshes.add(.failed)
        }
    }

    /// Where the keys came from and whether the last load worked, for the log.
    var lastError: String? { state.withLock { $0.lastError } }
}
