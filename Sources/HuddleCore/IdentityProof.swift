import HuddleProtocol

/// The claims of an ID token or app token the server verified (signature, issuer, audience,
/// times, the client's nonce) off the core thread: all the core needs to decide, without ever
/// seeing the token.
public struct VerifiedIdentity: Sendable, Equatable {
    /// The issuer as configured (`iss`), or the app-backend issuer.
    public var issuer: String
    public var subject: String
    /// Only when the token says it is verified; canonical.
    public var email: String?
    /// From `preferred_username` or the email's local part, for a first sign-in without a username.
    public var proposedUsername: String?
    /// The token's nonce, spent by the sign-in.
    public var nonce: String?
    /// The token's `exp`, milliseconds.
    public var expiresAt: Int64
    /// The token's `iat`, milliseconds: how fresh a sign-in proving an account deletion is.
    public var issuedAt: Int64?

    public init(
        issuer: String, subject: String, email: String?, proposedUsername: String?, nonce: String?, expiresAt: Int64, issuedAt: Int64? = nil
    ) {
        self.issuer = issuer
        self.subject = subject
        self.email = email
        self.proposedUsername = proposedUsername
        self.nonce = nonce
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
    }
}

/// What an `identity_signin`, `identity_link` or `app_auth` asks the core, once the server has
/// verified its token: the identity, or the refusal that is the reply.
public struct IdentityProof: Sendable, Equatable {
    public enum Purpose: Sendable, Equatable {
        /// `username`: the client's choice for a first sign-in.
        case signIn(username: String?)
        case link
        case appAuth
        /// `account_delete` with an ID token: a fresh sign-in to an identity of the caller's.
        case deleteAccount

        /// Whether the proof signs a connection in (a new session): not a link or a deletion.
        public var opensASession: Bool {
            switch self {
            case .signIn, .appAuth: true
            case .link, .deleteAccount: false
            }
        }
    }

    public var purpose: Purpose
    public var identity: VerifiedIdentity?
    public var refusal: CoreError?
    /// The session a sign-in opens (unused by a link or a refusal).
    public var session: NewSession

    public init(purpose: Purpose, identity: VerifiedIdentity?, refusal: CoreError?, session: NewSession) {
        self.purpose = purpose
        self.identity = identity
        self.refusal = refusal
        self.session = session
    }
}
