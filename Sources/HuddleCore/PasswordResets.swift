import HuddleProtocol

/// The password-reset codes waiting to be used (durable; protocol.md, "Password reset"): per
/// user at most one — a new request replaces it — as the SHA-256 of the code (never the code),
/// when it expires, and how many wrong codes were tried against it.
///
/// A code leaves when it is used, when its attempts run out, or when a newer one replaces it;
/// an expired one is ignored and goes with the next request. `erase` and `exported` are what
/// account deletion and export take of it. Coded as a list sorted by username.
public struct PasswordResets: Sendable, Equatable {
    public struct PendingReset: Sendable, Equatable {
        public var codeHash: [UInt8]
        public var expiresAt: Int64
        public var failedAttempts: Int
    }

    public private(set) var byUser: [Username: PendingReset] = [:]

    public init() {}

    public var count: Int { byUser.count }

    public subscript(user: Username) -> PendingReset? { byUser[user] }

    mutating func issue(_ codeHash: [UInt8], expiresAt: Int64, to user: Username) {
        byUser[user] = PendingReset(codeHash: codeHash, expiresAt: expiresAt, failedAttempts: 0)
    }

    /// One more wrong code; the code is gone at `limit`.
    mutating func fail(_ user: Username, limit: Int) {
        guard var pending = byUser[user] else { return }
        pending.failedAttempts += 1
        byUser[user] = pending.failedAttempts >= limit ? nil : pending
    }

    /// The code was used (or is no longer wanted).
    mutating func remove(_ user: Username) {
        byUser[user] = nil
    }

    /// Everything kept of the user gone (account deletion).
    public mutating func erase(_ user: Username) {
        byUser[user] = nil
    }

    /// For an export: when the user's waiting code expires, or null (never the code's hash).
    public func exported(for user: Username) -> JSONValue {
        .object([("reset_code_expires_at", byUser[user].map { .integer($0.expiresAt) } ?? .null)])
    }
}

/// `{user, codeHash, expiresAt, failedAttempts}` objects, by user.
extension PasswordResets: PersistedValue {
    var persisted: JSONValue {
        .array(byUser.keys.sorted().map { user in
            let pending = byUser[user]!
            return .record([
                ("user", user.persisted), ("codeHash", pending.codeHash.persisted), ("expiresAt", pending.expiresAt.persisted),
                ("failedAttempts", pending.failedAttempts.persisted),
            ])
        })
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for f in try PersistedFields.objects(persisted, "PendingReset") {
            let user: Username = try f("user")
            guard byUser[user] == nil else { throw RecordDecodingError("the reset code of \(user) appears twice") }
            byUser[user] = PendingReset(codeHash: try f("codeHash"), expiresAt: try f("expiresAt"), failedAttempts: try f("failedAttempts"))
        }
    }
}
