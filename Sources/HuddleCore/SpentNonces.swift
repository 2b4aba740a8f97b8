import HuddleProtocol

/// The ID-token nonces already spent, each until its token's `exp`, so a captured token cannot
/// be replayed while it is valid (protocol.md, "Limits").
///
/// Two bounds: the whole store, and what one identity (issuer + subject) holds. Without the
/// second, one person with a real account at a configured provider, signing in again and again
/// with fresh nonces, could fill the store and make everyone's sign-in `busy` until the tokens
/// expire; with it they need as many provider accounts as the store divided by the per-identity
/// bound. A nonce logged before the identity was recorded with it counts only toward the store.
struct SpentNonces: Sendable, Equatable {
    struct Spend: Sendable, Equatable {
        /// The token's expiry, milliseconds.
        var expiresAt: Int64
        var identity: IdentityKey?
    }

    /// What a new nonce of an identity would meet.
    enum Refusal: Equatable {
        case storeFull
        /// The identity holds its bound; its oldest nonce is forgotten after this long.
        case identityFull(retryAfterMilliseconds: Int64)
    }

    /// `issuer` + NUL + `nonce` → the spend.
    private(set) var byKey: [String: Spend] = [:]
    /// The keys each identity holds; derived from `byKey` (rebuilt when decoding).
    private var keysByIdentity: [IdentityKey: Set<String>] = [:]

    var count: Int { byKey.count }

    func contains(nonce: String, issuer: String) -> Bool { byKey[Self.key(issuer, nonce)] != nil }

    /// Whether `identity` may spend a nonce at `time` under both bounds, counting the nonces
    /// that `spend` would forget first (their tokens are refused as expired already).
    func refusal(for identity: IdentityKey, at time: Int64, bound: Int, perIdentity: Int) -> Refusal? {
        if let keys = keysByIdentity[identity], keys.count >= perIdentity {
            let expiries = keys.map { byKey[$0]!.expiresAt }
            if !expiries.contains(where: { $0 <= time }) {
                return .identityFull(retryAfterMilliseconds: max(expiries.min()! - time, 1))
            }
        }
        if byKey.count >= bound, !byKey.values.contains(where: { $0.expiresAt <= time }) { return .storeFull }
        return nil
    }

    /// Spends `nonce` until `expiresAt`. An identity at its bound forgets its own expired nonces
    /// first, and a full store every expired one.
    mutating func spend(nonce: String, issuer: String, subject: String?, until expiresAt: Int64, at time: Int64, bound: Int, perIdentity: Int) {
        let identity = subject.map { IdentityKey(issuer: issuer, subject: $0) }
        if let identity, let keys = keysByIdentity[identity], keys.count >= perIdentity {
            for key in keys where byKey[key]!.expiresAt <= time { forget(key) }
        }
        if byKey.count >= bound { forget(expiredBy: time) }
        let key = Self.key(issuer, nonce)
        if byKey[key] != nil { forget(key) }
        insert(key, Spend(expiresAt: expiresAt, identity: identity))
    }

    mutating func forget(expiredBy time: Int64) {
        for (key, spend) in byKey where spend.expiresAt <= time { forget(key) }
    }

    private mutating func insert(_ key: String, _ spend: Spend) {
        byKey[key] = spend
        if let identity = spend.identity { keysByIdentity[identity, default: []].insert(key) }
    }

    private mutating func forget(_ key: String) {
        guard let spend = byKey.removeValue(forKey: key), let identity = spend.identity else { return }
        keysByIdentity[identity]?.remove(key)
        if keysByIdentity[identity]?.isEmpty == true { keysByIdentity[identity] = nil }
    }

    private static func key(_ issuer: String, _ nonce: String) -> String { issuer + "\u{0}" + nonce }
}

/// `{key, expiresAt, subject}` sorted by key (the issuer is the key's part before the NUL);
/// `subject` is absent for nonces logged before it was recorded.
extension SpentNonces: PersistedValue {
    var persisted: JSONValue {
        .array(byKey.keys.sorted().map { key in
            let spend = byKey[key]!
            return .record([("key", key.persisted), ("expiresAt", spend.expiresAt.persisted), ("subject", spend.identity?.subject.persisted)])
        })
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for fields in try PersistedFields.objects(persisted, "Identities.nonce") {
            let key: String = try fields("key")
            let subject: String? = try fields.optional("subject")
            let issuer = key.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            insert(key, Spend(expiresAt: try fields("expiresAt"), identity: subject.map { IdentityKey(issuer: issuer, subject: $0) }))
        }
    }
}
