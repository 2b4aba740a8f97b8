/// What a client is told about an account (protocol.md: the `user` object).
public struct UserInfo: Sendable, Equatable {
    public var username: Username
    public var email: String

    public init(username: Username, email: String) {
        self.username = username
        self.email = email
    }
}
