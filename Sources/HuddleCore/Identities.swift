import HuddleProtocol

extension LinkedIdentity {
    var key: IdentityKey { IdentityKey(issuer: issuer, subject: subject) }
}

/// An identity's name: one issuer's user, never two accounts'.
public struct IdentityKey: Sendable, Hashable, Comparable {
    public var issuer: String
    public var subject: String

    public init(issuer: String, subject: String) {
        self.issuer = issuer
        self.subject = subject
    }

    public static func < (lhs: IdentityKey, rhs: IdentityKey) -> Bool {
        (lhs.issuer, lhs.subject) < (rhs.issuer, rhs.subject)
    }
}

public enum IdentityIssuer {
    /// The issuer app-backend identities are filed under when the operator names none.
    public static let appBackend = "app"
}

/// Which account each identity signs into, each account's identities, and the ID-token nonces
/// already spent (`SpentNonces`).
///
/// Per user it holds the user's linked identities (issuer, subject, linked at); nonces are kept
/// by issuer and identity, not by user (a first sign-in spends one before any account exists).
public struct Identities: Sendable, Equatable {
    private(set) var owners: [IdentityKey: Username] = [:]
    private var byUser: [Username: [LinkedIdentity]] = [:]
    private(set) var spentNonces = SpentNonces()

    public init() {}

    public var count: Int { owners.count }
    public var isEmpty: Bool { owners.isEmpty && spentNonces.count == 0 }
    public var spentNonceCount: Int { spentNonces.count }

    public func owner(of key: IdentityKey) -> Username? { owners[key] }

    /// The user's identities, oldest link first.
    public func identities(of user: Username) -> [LinkedIdentity] { byUser[user] ?? [] }

    public func isSpent(nonce: String, issuer: String) -> Bool { spentNonces.contains(nonce: nonce, issuer: issuer) }

    mutating func link(_ identity: LinkedIdentity, to user: Username) {
        guard owners[identity.key] == nil else { return }
        owners[identity.key] = user
        byUser[user, default: []].append(identity)
    }

    mutating func unlink(_ key: IdentityKey, of user: Username) {
        guard owners[key] == user else { return }
        owners[key] = nil
        byUser[user]?.removeAll { $0.key == key }
        if byUser[user]?.isEmpty == true { byUser[user] = nil }
    }

    mutating func spend(nonce: String, issuer: String, subject: String?, until expiresAt: Int64, at time: Int64, bound: Int, perIdentity: Int) {
        spentNonces.spend(nonce: nonce, issuer: issuer, subject: subject, until: expiresAt, at: time, bound: bound, perIdentity: perIdentity)
    }

    /// Account deletion: the user's identities are free to sign up again.
    public mutating func erase(_ user: Username) {
        for identity in byUser.removeValue(forKey: user) ?? [] { owners[identity.key] = nil }
    }

    /// What an export shows of the user: their identities.
    public func exported(for user: Username) -> JSONValue {
        .array(identities(of: user).map(\.json))
    }
}

extension LinkedIdentity: PersistedValue {
    var persisted: JSONValue { .record([("issuer", issuer.persisted), ("subject", subject.persisted), ("linkedAt", linkedAt.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "LinkedIdentity")
        self.init(issuer: try f("issuer"), subject: try f("subject"), linkedAt: try f("linkedAt"))
    }
}

/// Users sorted by name, each with their identities in link order; nonces sorted.
extension Identities: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("users", .array(byUser.keys.sorted().map { user in
                .record([("username", user.persisted), ("identities", byUser[user]!.persisted)])
            })),
            ("nonces", spentNonces.persisted),
        ])
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Identities")
        for fields in try f.objects("users", "Identities.user") {
            let user: Username = try fields("username")
            let identities: [LinkedIdentity] = try fields("identities")
            for identity in identities {
                guard owners[identity.key] == nil else { throw RecordDecodingError("identity \(identity.issuer) \(identity.subject) appears twice") }
                link(identity, to: user)
            }
        }
        spentNonces = try f("nonces")
    }
}
