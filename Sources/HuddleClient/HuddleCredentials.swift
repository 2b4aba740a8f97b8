/// How a `HuddleClient` signs in on every connection it opens.
public enum HuddleCredentials: Sendable, Equatable {
    /// Stay anonymous until the application calls `signUp`, `logIn` or `authenticate`; from
    /// then on the session's token is presented on every reconnect.
    case none
    /// A session token from an earlier sign-in (protocol.md, "Authentication"): presented on
    /// the upgrade (`Authorization: Bearer`). If the server refuses it, the client stops.
    case token(String)
    /// Log in with a username or email and a password on the first connection; later ones
    /// present the session's token. If the token is refused later (expired, revoked), the
    /// client logs in with the password once more before it gives up.
    case password(login: String, password: String)
}
