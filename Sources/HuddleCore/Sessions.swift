import HuddleProtocol

/// An open session: who it authenticates and until when. Keyed by the SHA-256 of its token.
public struct SessionRecord: Sendable, Equatable {
    public var tokenHash: [UInt8]
    public var username: Username
    public var expiresAt: Int64
    public var device: String?
    public var createdAt: Int64
    /// The last sign-in with it (protocol.md, "Sessions"); its creation until an `auth` logs one.
    public var lastSeenAt: Int64

    public init(tokenHash: [UInt8], username: Username, expiresAt: Int64, device: String?, createdAt: Int64, lastSeenAt: Int64? = nil) {
        self.tokenHash = tokenHash
        self.username = username
        self.expiresAt = expiresAt
        self.device = device
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt ?? createdAt
    }
}

/// Every session not revoked or purged, by token hash, plus each user's set of token hashes
/// (for `logout` with `all`).
///
/// Coded as a list sorted by token hash; the per-user index is rebuilt when decoding.
public struct Sessions: Sendable, Equatable {
    public private(set) var byTokenHash: [[UInt8]: SessionRecord] = [:]
    private var tokenHashesByUser: [Username: Set<[UInt8]>] = [:]

    public init() {}

    public var count: Int { byTokenHash.count }

    public subscript(tokenHash: [UInt8]) -> SessionRecord? { byTokenHash[tokenHash] }

    /// The user's token hashes in byte order.
    public func tokenHashes(of username: Username) -> [[UInt8]] {
        (tokenHashesByUser[username] ?? []).sorted(by: Self.precedes)
    }

    mutating func insert(_ session: SessionRecord) {
        if let previous = byTokenHash.updateValue(session, forKey: session.tokenHash) {
            removeFromUserIndex(previous)
        }
        tokenHashesByUser[session.username, default: []].insert(session.tokenHash)
    }

    /// Moves the session's last seen forward to `time` (never back), if it is the owner's.
    mutating func see(_ tokenHash: [UInt8], ownedBy owner: Username, at time: Int64) {
        guard let session = byTokenHash[tokenHash], session.username == owner, time > session.lastSeenAt else { return }
        byTokenHash[tokenHash]?.lastSeenAt = time
    }

    /// Removes the session if it exists and, when `owner` is given, belongs to that user.
    @discardableResult
    mutating func remove(_ tokenHash: [UInt8], ownedBy owner: Username? = nil) -> SessionRecord? {
        guard let session = byTokenHash[tokenHash], owner == nil || session.username == owner else { return nil }
        byTokenHash[tokenHash] = nil
        removeFromUserIndex(session)
        return session
    }

    private mutating func removeFromUserIndex(_ session: SessionRecord) {
        tokenHashesByUser[session.username]?.remove(session.tokenHash)
        if tokenHashesByUser[session.username]?.isEmpty == true { tokenHashesByUser[session.username] = nil }
    }

    /// Byte-wise order of token hashes, used wherever a list of them becomes visible.
    static func precedes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.lexicographicallyPrecedes(rhs)
    }

    /// Account deletion: every session of the user.
    mutating func erase(_ user: Username) {
        for tokenHash in tokenHashesByUser.removeValue(forKey: user) ?? [] { byTokenHash[tokenHash] = nil }
    }
}

/// Sessions in token-hash order.
extension Sessions: PersistedValue {
    var persisted: JSONValue { .array(byTokenHash.keys.sorted(by: Self.precedes).map { byTokenHash[$0]!.persisted }) }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for session in try [SessionRecord](persisted: persisted) {
            guard byTokenHash[session.tokenHash] == nil else { throw RecordDecodingError("a session appears twice") }
            insert(session)
        }
    }
}
