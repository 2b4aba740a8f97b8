import HuddleProtocol

/// protocol.md "Identities": sign-in with an identity provider's ID token or the app backend's
/// token (each becomes the session the client resumes on reconnect), and the account's linked
/// identities.
extension HuddleClient {
    /// `identity_signin`: `nonce` is the one the app put in its authentication request;
    /// `username` names the account a first sign-in makes (else the server proposes one).
    public func signIn(
        idToken: String, nonce: String? = nil, username: String? = nil, device: String? = nil,
        completion: @escaping (Result<HuddleSession, HuddleClientError>) -> Void
    ) {
        signIn(.identitySignIn(token: idToken, nonce: nonce, username: username, device: device ?? configuration.device), completion: completion)
    }

    /// `app_auth`: a token the app's backend signed, naming the user.
    public func signIn(appToken: String, device: String? = nil, completion: @escaping (Result<HuddleSession, HuddleClientError>) -> Void) {
        signIn(.appAuth(token: appToken, device: device ?? configuration.device), completion: completion)
    }

    /// `identity_link`: adds the ID token's identity to this account; the result is every identity.
    public func linkIdentity(idToken: String, nonce: String? = nil, completion: @escaping (Result<[LinkedIdentity], HuddleClientError>) -> Void) {
        request(.identityLink(token: idToken, nonce: nonce), reading: LinkedIdentity.list(in:), completion: completion)
    }

    /// `identity_unlink`; the result is the identities left.
    public func unlinkIdentity(issuer: String, subject: String, completion: @escaping (Result<[LinkedIdentity], HuddleClientError>) -> Void) {
        request(.identityUnlink(issuer: issuer, subject: subject), reading: LinkedIdentity.list(in:), completion: completion)
    }

    /// `identities`, oldest link first.
    public func identities(completion: @escaping (Result<[LinkedIdentity], HuddleClientError>) -> Void) {
        request(.identities, resendAfterReconnect: true, reading: LinkedIdentity.list(in:), completion: completion)
    }
}
