/// Who a connection is signed in as, and with which session.
struct ConnectionIdentity: Sendable, Equatable {
    var username: Username
    var tokenHash: [UInt8]
    /// Kept here because the session may be purged while the connection lives.
    var expiresAt: Int64
}

/// A login whose password the server is verifying (`CoreOutput.verifyPassword`).
struct PendingLogin: Sendable, Equatable {
    var requestID: String
    /// The login's throttling key: the account's username, or an unknown login as spelled.
    var account: String
    /// The account the password is checked against; nil for an unknown login.
    var username: Username?
    var address: String
}

/// A live connection as the core sees it.
struct ConnectionState: Sendable {
    var address: String
    var identity: ConnectionIdentity?
    var pendingLogins: [PendingLogin] = []
}

/// The live connections (ephemeral), indexed by user and by session so that logout, the HTTP
/// API's disconnect and presence find theirs without scanning.
struct ConnectionRegistry: Sendable {
    private var states: [ConnectionRef: ConnectionState] = [:]
    private var connectionsBySession: [[UInt8]: Set<ConnectionRef>] = [:]
    private var connectionsByUser: [Username: Set<ConnectionRef>] = [:]

    init() {}

    var count: Int { states.count }

    subscript(connection: ConnectionRef) -> ConnectionState? { states[connection] }

    /// Returns false if the connection is open already.
    mutating func open(_ connection: ConnectionRef, address: String) -> Bool {
        guard states[connection] == nil else { return false }
        states[connection] = ConnectionState(address: address)
        return true
    }

    /// Signs an open, anonymous connection in. Returns true if it is its user's only connection.
    mutating func authenticate(_ connection: ConnectionRef, as identity: ConnectionIdentity) -> Bool {
        precondition(states[connection]?.identity == nil, "authenticating an unknown or signed-in connection")
        states[connection]!.identity = identity
        connectionsBySession[identity.tokenHash, default: []].insert(connection)
        connectionsByUser[identity.username, default: []].insert(connection)
        return connectionsByUser[identity.username]!.count == 1
    }

    mutating func addPendingLogin(_ login: PendingLogin, to connection: ConnectionRef) {
        states[connection]?.pendingLogins.append(login)
    }

    /// Removes and returns the oldest pending login of `connection` with this request ID and
    /// username; nil if there is none (the connection closed, or the server answered twice).
    mutating func removePendingLogin(of connection: ConnectionRef, requestID: String, username: Username?) -> PendingLogin? {
        guard let index = states[connection]?.pendingLogins.firstIndex(where: {
            $0.requestID == requestID && $0.username == username
        }) else { return nil }
        return states[connection]!.pendingLogins.remove(at: index)
    }

    /// Forgets the connection and returns what it was; nil if it was not open.
    mutating func close(_ connection: ConnectionRef) -> ConnectionState? {
        guard let state = states.removeValue(forKey: connection) else { return nil }
        if let identity = state.identity {
            Self.remove(connection, key: identity.tokenHash, from: &connectionsBySession)
            Self.remove(connection, key: identity.username, from: &connectionsByUser)
        }
        return state
    }

    /// Users with at least one signed-in connection.
    var userCount: Int { connectionsByUser.count }

    func hasConnections(of user: Username) -> Bool {
        connectionsByUser[user] != nil
    }

    /// Sorted.
    func connections(of user: Username) -> [ConnectionRef] {
        (connectionsByUser[user] ?? []).sorted()
    }

    /// Sorted.
    func connections(ofAnyOf users: Set<Username>) -> [ConnectionRef] {
        users.flatMap { connectionsByUser[$0] ?? [] }.sorted()
    }

    /// Sorted.
    func connections(usingSessions tokenHashes: [[UInt8]]) -> [ConnectionRef] {
        Set(tokenHashes.flatMap { connectionsBySession[$0] ?? [] }).sorted()
    }

    private static func remove<Key>(_ connection: ConnectionRef, key: Key, from index: inout [Key: Set<ConnectionRef>]) {
        index[key]?.remove(connection)
        if index[key]?.isEmpty == true { index[key] = nil }
    }
}
