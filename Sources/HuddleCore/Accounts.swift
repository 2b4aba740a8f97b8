import HuddleProtocol

/// A registered user.
public struct UserRecord: Sendable, Equatable {
    public var username: Username
    /// Canonical (lowercase).
    public var email: String
    /// nil for an account made by a sign-in with an identity, which has no password.
    public var credentials: Credentials?
    /// When the account was created, milliseconds since the Unix epoch.
    public var createdAt: Int64

    public init(username: Username, email: String, credentials: Credentials?, createdAt: Int64) {
        self.username = username
        self.email = email
        self.credentials = credentials
        self.createdAt = createdAt
    }

    public var info: UserInfo { UserInfo(username: username, email: email) }
}

/// Every account, by username and by email (both canonical, both unique).
///
/// Coded as a list of users sorted by username; the email index is rebuilt when decoding.
public struct Accounts: Sendable, Equatable {
    public private(set) var byUsername: [Username: UserRecord] = [:]
    private var usernamesByEmail: [String: Username] = [:]

    public init() {}

    public var count: Int { byUsername.count }

    public subscript(username: Username) -> UserRecord? { byUsername[username] }

    /// `email` must be canonical. The empty email (an account made from an identity without a
    /// verified one) belongs to nobody.
    public func user(withEmail email: String) -> UserRecord? {
        usernamesByEmail[email].flatMap { byUsername[$0] }
    }

    /// The user's new password verifier (nothing for an unknown user).
    mutating func setCredentials(_ credentials: Credentials, of username: Username) {
        byUsername[username]?.credentials = credentials
    }

    /// Adds or replaces the user; replacing moves the email index along.
    mutating func insert(_ user: UserRecord) {
        if let previous = byUsername.updateValue(user, forKey: user.username), previous.email != user.email {
            usernamesByEmail[previous.email] = nil
        }
        if !user.email.isEmpty { usernamesByEmail[user.email] = user.username }
    }

    /// Account deletion: the user's record goes, and their email is free at once.
    mutating func erase(_ user: Username) {
        guard let record = byUsername.removeValue(forKey: user) else { return }
        if usernamesByEmail[record.email] == user { usernamesByEmail[record.email] = nil }
    }
}

/// Users sorted by name.
extension Accounts: PersistedValue {
    var persisted: JSONValue { .array(byUsername.keys.sorted().map { byUsername[$0]!.persisted }) }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        for user in try [UserRecord](persisted: persisted) {
            guard byUsername[user.username] == nil, user.email.isEmpty || usernamesByEmail[user.email] == nil else {
                throw RecordDecodingError("user \(user.username) or email \(user.email) appears twice")
            }
            insert(user)
        }
    }
}
