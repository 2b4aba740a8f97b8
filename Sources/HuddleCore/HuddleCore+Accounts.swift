import HuddleProtocol

/// Accounts and sessions: signup, login, auth, logout, whoami (protocol.md, "Authentication").
extension HuddleCore {
    static let revokedCloseCode: UInt16 = 4001

    /// First half of a signup: judges every rule (the cheap refusals) and admits the hash to
    /// the bounded KDF work, then asks the server to hash the password.
    func beginSignUp(
        _ connection: ConnectionRef, requestID: String, username rawUsername: String, email rawEmail: String,
        password: String, address: String, at time: Int64, into step: inout CoreStep
    ) {
        guard connections[connection] != nil else { return }
        if let error = signUpRefusal(
            connection, username: rawUsername, email: rawEmail, passwordLength: password.count,
            passwordEqualsUsername: password.lowercased() == rawUsername.lowercased(), at: time)
        {
            return fail(connection, requestID, error, into: &step)
        }
        if let error = passwordHashes.refusal(of: .signUp, from: address, configuration: configuration) {
            return fail(connection, requestID, error, into: &step)
        }
        passwordHashes.begin(.signUp, from: address)
        step.outputs.append(.hashNewPassword(connection, requestID: requestID, username: rawUsername, email: rawEmail, password: password, address: address))
    }

    /// Second half of a signup, the password hashed. The rules are judged again: another
    /// signup may have taken the name while this one was hashing.
    func signUp(
        _ connection: ConnectionRef, requestID: String, username rawUsername: String, email rawEmail: String,
        passwordLength: Int, passwordEqualsUsername: Bool, credentials: Credentials, session: NewSession,
        at time: Int64, into step: inout CoreStep
    ) {
        guard connections[connection] != nil else { return }
        if let error = signUpRefusal(
            connection, username: rawUsername, email: rawEmail, passwordLength: passwordLength, passwordEqualsUsername: passwordEqualsUsername,
            at: time)
        {
            return fail(connection, requestID, error, into: &step)
        }
        // Checked by signUpRefusal.
        guard let username = UsernameRules.canonical(rawUsername), let email = EmailRules.canonical(rawEmail) else { return }
        record(.signUp(username: username, email: email, credentials: credentials, session: session, time: time), into: &step)
        let user = UserInfo(username: username, email: email)
        reply(connection, requestID, .account(user: user, expiresAt: session.expiresAt, isNewSession: true), into: &step)
        signIn(connection, as: ConnectionIdentity(username: username, tokenHash: session.tokenHash, expiresAt: session.expiresAt), into: &step)
    }

    /// The first signup rule the request breaks, in protocol.md's order of signup errors.
    private func signUpRefusal(
        _ connection: ConnectionRef, username rawUsername: String, email rawEmail: String, passwordLength: Int, passwordEqualsUsername: Bool,
        at time: Int64
    ) -> CoreError? {
        guard connections[connection]?.identity == nil else { return Self.alreadySignedIn }
        guard let username = UsernameRules.canonical(rawUsername) else {
            return CoreError(.invalidUsername, "a username is 3–32 characters from a-z 0-9 _ and starts with a letter")
        }
        guard let email = EmailRules.canonical(rawEmail) else { return CoreError(.invalidEmail, "not an email address") }
        guard PasswordRules.lengths.contains(passwordLength), !passwordEqualsUsername else {
            return CoreError(.weakPassword, "a password is 8–128 characters and not the username")
        }
        guard durableState.accounts[username] == nil else { return CoreError(.usernameTaken, "the username \(username) is taken") }
        if let until = durableState.quarantinedUsernames.heldUntil(username, at: time) {
            return CoreError(.usernameTaken, "the username \(username) belonged to a deleted account; it is free again from \(until) (ms since the Unix epoch)")
        }
        guard durableState.accounts.user(withEmail: email) == nil else { return CoreError(.emailTaken, "an account with this email exists") }
        return nil
    }

    /// First half of a login: refuse early, or ask the server to verify the password.
    func beginLogin(
        _ connection: ConnectionRef, requestID: String, login: String, address: String, password: String,
        at time: Int64, into step: inout CoreStep
    ) {
        guard let state = connections[connection] else { return }
        guard state.identity == nil else {
            return fail(connection, requestID, Self.alreadySignedIn, into: &step)
        }
        let user = login.utf8.contains(UInt8(ascii: "@"))
            ? durableState.accounts.user(withEmail: login.lowercased())
            : UsernameRules.canonical(login).flatMap { durableState.accounts[$0] }
        // An unknown login is limited under its own spelling, as if it were an account, so that
        // guessing logins costs the same as guessing passwords.
        let account = user?.username ?? login.lowercased()
        if let wait = loginThrottle.retryAfter(account: account, address: address, at: time) {
            let error = CoreError(.tooManyAttempts, "too many failed logins; try again later", retryAfterMilliseconds: wait)
            return fail(connection, requestID, error, into: &step)
        }
        if let error = passwordHashes.refusal(of: .login, from: address, configuration: configuration) {
            return fail(connection, requestID, error, into: &step)
        }
        // An unknown login is hashed too (against nothing): answering it at once would tell
        // which logins exist by the reply's timing.
        passwordHashes.begin(.login, from: address)
        connections.addPendingLogin(PendingLogin(requestID: requestID, account: account, username: user?.username, address: address), to: connection)
        loginThrottle.beginVerification(account: account, address: address, at: time)
        step.outputs.append(.verifyPassword(
            connection, requestID: requestID, username: user?.username, credentials: user?.credentials,
            password: password, address: address
        ))
    }

    /// Second half of a login, once the server verified the password. Dropped without a reply
    /// if the connection closed meanwhile (no session is opened for nobody).
    func finishLogin(
        _ connection: ConnectionRef, requestID: String, username: Username?, passwordMatched: Bool,
        session: NewSession, refusal: CoreError? = nil, at time: Int64, into step: inout CoreStep
    ) {
        guard let pending = connections.removePendingLogin(of: connection, requestID: requestID, username: username) else { return }
        loginThrottle.endVerification(account: pending.account, address: pending.address)
        if let refusal { return fail(connection, requestID, refusal, into: &step) }
        guard passwordMatched, let username else {
            loginThrottle.recordFailure(account: pending.account, address: pending.address, at: time)
            return fail(connection, requestID, Self.wrongCredentials, into: &step)
        }
        // Two logins raced on one connection and the other won.
        guard connections[connection]?.identity == nil else {
            return fail(connection, requestID, Self.alreadySignedIn, into: &step)
        }
        guard let user = durableState.accounts[username] else {
            return fail(connection, requestID, Self.wrongCredentials, into: &step)
        }
        loginThrottle.clearFailures(account: pending.account, address: pending.address)
        if let refusal = suspensionRefusal(username, at: time) { return fail(connection, requestID, refusal, into: &step) }
        record(.openSession(username: username, session: session, time: time), into: &step)
        reply(connection, requestID, .account(user: user.info, expiresAt: session.expiresAt, isNewSession: true), into: &step)
        signIn(connection, as: ConnectionIdentity(username: username, tokenHash: session.tokenHash, expiresAt: session.expiresAt), into: &step)
    }

    /// The `auth` op (with a request ID) or a token from the upgrade request (without).
    func authenticate(_ connection: ConnectionRef, requestID: String?, tokenHash: [UInt8], at time: Int64, into step: inout CoreStep) {
        guard let state = connections[connection] else { return }
        let refusal: CoreError
        if state.identity != nil {
            refusal = Self.alreadySignedIn
        } else if let session = durableState.sessions[tokenHash], let user = durableState.accounts[session.username] {
            guard time < session.expiresAt else {
                return refuseToken(connection, requestID, CoreError(.tokenExpired, "the session expired; log in again"), at: time, into: &step)
            }
            if let refusal = suspensionRefusal(user.username, at: time) { return refuseToken(connection, requestID, refusal, at: time, into: &step) }
            if let requestID {
                reply(connection, requestID, .account(user: user.info, expiresAt: session.expiresAt, isNewSession: false), into: &step)
            } else {
                step.outputs.append(.sessionAccepted(connection, user: user.info, expiresAt: session.expiresAt))
            }
            let identity = ConnectionIdentity(username: user.username, tokenHash: tokenHash, expiresAt: session.expiresAt)
            sessionsSeen.saw(tokenHash, at: time)
            return signIn(connection, as: identity, into: &step)
        } else {
            refusal = CoreError(.invalidToken, "unknown or revoked token")
        }
        refuseToken(connection, requestID, refusal, at: time, into: &step)
    }

    /// An `auth` op is answered; a token from the upgrade request costs the connection.
    private func refuseToken(_ connection: ConnectionRef, _ requestID: String?, _ error: CoreError, at time: Int64, into step: inout CoreStep) {
        if let requestID {
            fail(connection, requestID, error, into: &step)
        } else {
            step.outputs.append(.authFailed(connection, error))
            forget(connection, at: time)
        }
    }

    /// Revokes the connection's session (or all the user's), replies, then closes every
    /// connection signed in with a revoked session — the caller included.
    func logout(_ connection: ConnectionRef, requestID: String, all: Bool, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let revoked: [[UInt8]]
        let closing: [ConnectionRef]
        if all {
            revoked = durableState.sessions.tokenHashes(of: identity.username)
            closing = connections.connections(of: identity.username)
        } else {
            revoked = durableState.sessions[identity.tokenHash] == nil ? [] : [identity.tokenHash]
            closing = connections.connections(usingSessions: [identity.tokenHash])
        }
        let command = revoked.isEmpty ? nil : CoreCommand.revokeSessions(username: identity.username, tokenHashes: revoked, time: time)
        if let command { record(command, into: &step) }
        reply(connection, requestID, .revoked(count: revoked.count), into: &step)
        // The revoked sessions' connections close as on any node (`tellLive`); the caller's too,
        // should its session have gone already.
        if let command { tellLive(after: command, at: time, into: &step) }
        close(closing.filter { connections[$0] != nil }, reason: Self.loggedOutReason, at: time, into: &step)
    }

    func whoami(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        // Accounts are never deleted, so the user exists; the fallback keeps "one reply per request".
        guard let user = durableState.accounts[identity.username] else {
            return fail(connection, requestID, CoreError(.notAuthenticated, "the account no longer exists"), into: &step)
        }
        reply(connection, requestID, .account(user: user.info, expiresAt: identity.expiresAt, isNewSession: false), into: &step)
    }

    /// The identity of a signed-in connection. Otherwise nil, having replied `not_authenticated`
    /// (or nothing, for a connection the core does not know).
    func signedInIdentity(_ connection: ConnectionRef, _ requestID: String, into step: inout CoreStep) -> ConnectionIdentity? {
        guard let state = connections[connection] else { return nil }
        guard let identity = state.identity else {
            fail(connection, requestID, CoreError(.notAuthenticated, "sign in first: signup, login or auth"), into: &step)
            return nil
        }
        return identity
    }

    /// Binds the connection to its user; if that brings the user online, tells their friends.
    func signIn(_ connection: ConnectionRef, as identity: ConnectionIdentity, into step: inout CoreStep) {
        if connections.authenticate(connection, as: identity), presence.userConnected(identity.username) {
            localPresenceChanged(of: identity.username, online: true, into: &step)
        }
    }

    private static let alreadySignedIn = CoreError(.alreadyAuthenticated, "this connection is signed in already")
    private static let wrongCredentials = CoreError(.invalidCredentials, "wrong login or password")
}
