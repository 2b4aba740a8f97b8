import HuddleProtocol

/// Sign-in with an identity provider's ID token or an app backend's token, and the account's
/// linked identities (protocol.md, "Identities"). The server verified the token; the core
/// decides from the claims alone, so a replay decides the same.
extension HuddleCore {
    func identityVerified(_ connection: ConnectionRef, requestID: String, _ proof: IdentityProof, at time: Int64, into step: inout CoreStep) {
        guard let state = connections[connection] else { return }
        if let refusal = proof.refusal { return fail(connection, requestID, refusal, into: &step) }
        guard let identity = proof.identity else {
            return fail(connection, requestID, CoreError(.invalidIdentityToken, "the token could not be verified"), into: &step)
        }
        if let error = nonceRefusal(identity, at: time) { return fail(connection, requestID, error, into: &step) }
        let key = IdentityKey(issuer: identity.issuer, subject: identity.subject)
        let owner = durableState.identities.owner(of: key)
        switch proof.purpose {
        case .link:
            guard let me = state.identity else {
                return fail(connection, requestID, CoreError(.notAuthenticated, "sign in to the account to link the identity to"), into: &step)
            }
            if let owner, owner != me.username {
                return fail(connection, requestID, CoreError(.identityTaken, "this identity signs into another account"), into: &step)
            }
            if owner == nil {
                guard durableState.identities.identities(of: me.username).count < configuration.maxIdentitiesPerUser else {
                    let error = CoreError(.tooManyIdentities, "an account links at most \(configuration.maxIdentitiesPerUser) identities")
                    return fail(connection, requestID, error, into: &step)
                }
                record(.linkIdentity(username: me.username, identity: identity.linked(at: time), time: time), into: &step)
            }
            spendNonce(of: identity, at: time, into: &step)
            reply(connection, requestID, .identities(durableState.identities.identities(of: me.username)), into: &step)
        case .deleteAccount:
            guard let me = state.identity else {
                return fail(connection, requestID, CoreError(.notAuthenticated, "sign in to the account to delete"), into: &step)
            }
            guard owner == me.username else {
                let error = CoreError(.invalidCredentials, "this identity does not sign into this account: the account was not deleted")
                return fail(connection, requestID, error, into: &step)
            }
            // Fresh: issued (iat) within `freshSignInMilliseconds`, so a token kept from an old
            // sign-in does not prove the person is here now.
            guard let issuedAt = identity.issuedAt, time - issuedAt <= configuration.freshSignInMilliseconds else {
                let minutes = configuration.freshSignInMilliseconds / 60_000
                let error = CoreError(.invalidCredentials, "sign in with the provider again: the token must be issued within \(minutes) minutes")
                return fail(connection, requestID, error, into: &step)
            }
            spendNonce(of: identity, at: time, into: &step)
            reply(connection, requestID, .done, into: &step)
            deleteAccount(me.username, at: time, into: &step)
        case .signIn, .appAuth:
            guard state.identity == nil else {
                return fail(connection, requestID, CoreError(.alreadyAuthenticated, "this connection is signed in already"), into: &step)
            }
            let username: Username
            if let owner, durableState.accounts[owner] != nil {
                username = owner
            } else {
                switch newAccount(for: identity, purpose: proof.purpose, at: time) {
                case .failure(let error): return fail(connection, requestID, error, into: &step)
                case .success(let (name, email)):
                    username = name
                    record(.createIdentityAccount(username: name, email: email, identity: identity.linked(at: time), time: time), into: &step)
                }
            }
            spendNonce(of: identity, at: time, into: &step)
            record(.openSession(username: username, session: proof.session, time: time), into: &step)
            guard let user = durableState.accounts[username] else {
                return fail(connection, requestID, CoreError(.notAuthenticated, "the account no longer exists"), into: &step)
            }
            reply(connection, requestID, .account(user: user.info, expiresAt: proof.session.expiresAt, isNewSession: true), into: &step)
            let signedIn = ConnectionIdentity(username: username, tokenHash: proof.session.tokenHash, expiresAt: proof.session.expiresAt)
            signIn(connection, as: signedIn, into: &step)
        }
    }

    /// A replayed nonce, or no room to remember a new one.
    private func nonceRefusal(_ identity: VerifiedIdentity, at time: Int64) -> CoreError? {
        guard let nonce = identity.nonce else { return nil }
        if durableState.identities.isSpent(nonce: nonce, issuer: identity.issuer) {
            return CoreError(.nonceReused, "this token's nonce was used already; get a new token")
        }
        let key = IdentityKey(issuer: identity.issuer, subject: identity.subject)
        switch durableState.identities.spentNonces.refusal(
            for: key, at: time, bound: configuration.maxSpentNonces, perIdentity: configuration.maxSpentNoncesPerIdentity)
        {
        case nil: return nil
        case .identityFull(let wait):
            let error = "this identity signed in \(configuration.maxSpentNoncesPerIdentity) times with tokens that are still valid; try again later"
            return CoreError(.tooManyAttempts, error, retryAfterMilliseconds: wait)
        case .storeFull:
            return CoreError(.busy, "too many sign-ins are in flight; try again later", retryAfterMilliseconds: configuration.spentNoncesRetryMilliseconds)
        }
    }

    private func spendNonce(of identity: VerifiedIdentity, at time: Int64, into step: inout CoreStep) {
        guard let nonce = identity.nonce else { return }
        record(.spendNonce(issuer: identity.issuer, subject: identity.subject, nonce: nonce, expiresAt: identity.expiresAt, time: time), into: &step)
    }

    /// The username and email of the account a first sign-in makes. An app token names its user
    /// (`sub`); an ID token takes the client's choice or proposes one. A clash is refused with
    /// the way out: sign in to that account and link the identity.
    private func newAccount(for identity: VerifiedIdentity, purpose: IdentityProof.Purpose, at time: Int64) -> Result<(Username, String), CoreError> {
        let wanted: String?
        switch purpose {
        case .appAuth: wanted = identity.subject
        case .signIn(let chosen): wanted = chosen ?? identity.proposedUsername
        case .link, .deleteAccount: wanted = nil
        }
        guard let wanted, let username = UsernameRules.canonical(wanted) else {
            let message = purpose == .appAuth
                ? "the token's sub is not a username (3–32 characters from a-z 0-9 _, starting with a letter)"
                : "choose a username: 3–32 characters from a-z 0-9 _, starting with a letter"
            return .failure(CoreError(.invalidUsername, message))
        }
        guard durableState.accounts[username] == nil else {
            return .failure(CoreError(
                .usernameTaken, "the username \(username) is taken; choose another, or sign in to that account and link this identity (identity_link)"))
        }
        // A deleted account's name is held as for `signup` (protocol.md, "Deletion and retention").
        if let until = durableState.quarantinedUsernames.heldUntil(username, at: time) {
            return .failure(CoreError(
                .usernameTaken, "the username \(username) belonged to a deleted account; it is free again from \(until) (ms since the Unix epoch)"))
        }
        let email = identity.email.flatMap(EmailRules.canonical) ?? ""
        if !email.isEmpty, durableState.accounts.user(withEmail: email) != nil {
            return .failure(CoreError(.emailTaken, "an account with this email exists; sign in to it and link this identity (identity_link)"))
        }
        return .success((username, email))
    }

    func unlinkIdentity(_ connection: ConnectionRef, requestID: String, issuer: String, subject: String, at time: Int64, into step: inout CoreStep) {
        guard let me = signedInIdentity(connection, requestID, into: &step) else { return }
        let key = IdentityKey(issuer: issuer, subject: subject)
        guard durableState.identities.owner(of: key) == me.username else {
            return fail(connection, requestID, CoreError(.identityNotFound, "no such identity is linked to this account"), into: &step)
        }
        let hasPassword = durableState.accounts[me.username]?.credentials != nil
        guard hasPassword || durableState.identities.identities(of: me.username).count > 1 else {
            let error = CoreError(.lastSignInMethod, "this identity is the account's only way to sign in: link another first")
            return fail(connection, requestID, error, into: &step)
        }
        record(.unlinkIdentity(username: me.username, issuer: issuer, subject: subject, time: time), into: &step)
        reply(connection, requestID, .identities(durableState.identities.identities(of: me.username)), into: &step)
    }

    func listIdentities(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let me = signedInIdentity(connection, requestID, into: &step) else { return }
        reply(connection, requestID, .identities(durableState.identities.identities(of: me.username)), into: &step)
    }
}

extension VerifiedIdentity {
    func linked(at time: Int64) -> LinkedIdentity { LinkedIdentity(issuer: issuer, subject: subject, linkedAt: time) }
}
