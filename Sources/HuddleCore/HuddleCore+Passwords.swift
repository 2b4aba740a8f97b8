import HuddleProtocol

/// Password change and reset (protocol.md, "Passwords"). As at login, the core never hashes:
/// it judges the rules and the limits, asks the server to verify and hash on its password
/// workers (`CoreOutput.changePassword`, `hashResetPassword`), and records the result the
/// server sends back. A reset code is drawn and hashed by the server; the core keeps only its
/// SHA-256 (`PasswordResets`) and hands the mail to the server (`mailPasswordReset`), which
/// alone sees the code.
extension HuddleCore {
    /// Wrong codes tried against one code before it is gone.
    static let resetAttemptsPerCode = 5

    // MARK: Change

    /// First half of `password_change`: the new password's rules, the login limits (a stolen
    /// session must not make guessing the password cheap), then the server verifies and hashes.
    func beginPasswordChange(
        _ connection: ConnectionRef, requestID: String, oldPassword: String, newPassword: String, revokeOthers: Bool, at time: Int64,
        into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let address = connections[connection]?.address, let user = durableState.accounts[identity.username]
        else { return }
        // An account made by an identity has no password to change (a reset can give it one).
        guard let credentials = user.credentials else {
            return fail(connection, requestID, CoreError(.invalidCredentials, "this account has no password"), into: &step)
        }
        if let error = Self.weakPasswordRefusal(newPassword, of: user.username) {
            return fail(connection, requestID, error, into: &step)
        }
        if let wait = loginThrottle.retryAfter(account: user.username, address: address, at: time) {
            let error = CoreError(.tooManyAttempts, "too many wrong passwords; try again later", retryAfterMilliseconds: wait)
            return fail(connection, requestID, error, into: &step)
        }
        if let error = passwordHashes.refusal(of: .login, from: address, configuration: configuration) {
            return fail(connection, requestID, error, into: &step)
        }
        passwordHashes.begin(.login, from: address)
        loginThrottle.beginVerification(account: user.username, address: address, at: time)
        step.outputs.append(.changePassword(
            connection, requestID: requestID, username: user.username, credentials: credentials, oldPassword: oldPassword,
            newPassword: newPassword, revokeOthers: revokeOthers, address: address))
    }

    /// Second half: `newCredentials` nil when the old password did not match. Dropped without a
    /// reply if the connection closed meanwhile.
    func finishPasswordChange(
        _ connection: ConnectionRef, requestID: String, username: Username, verified: Credentials, newCredentials: Credentials?,
        revokeOthers: Bool, address: String, at time: Int64, into step: inout CoreStep
    ) {
        loginThrottle.endVerification(account: username, address: address)
        guard let identity = connections[connection]?.identity, identity.username == username else { return }
        // A change that raced this one and won makes the old password checked here stale.
        guard let newCredentials, durableState.accounts[username]?.credentials == verified else {
            loginThrottle.recordFailure(account: username, address: address, at: time)
            return fail(connection, requestID, CoreError(.invalidCredentials, "wrong password"), into: &step)
        }
        loginThrottle.clearFailures(account: username, address: address)
        record(.setCredentials(username: username, credentials: newCredentials, time: time), into: &step)
        let others = revokeOthers ? durableState.sessions.tokenHashes(of: username).filter { $0 != identity.tokenHash } : []
        let command = others.isEmpty ? nil : CoreCommand.revokeSessions(username: username, tokenHashes: others, time: time)
        if let command { record(command, into: &step) }
        reply(connection, requestID, .revoked(count: others.count), into: &step)
        if let command { tellLive(after: command, at: time, into: &step) }
    }

    // MARK: Reset

    /// `password_reset_request`: the same reply (`{}`) whether or not the login names an
    /// account, so nobody learns which do; a code is issued and mailed only for one that does,
    /// within the account's limit. `codeHash` and `expiresAt` come from the server, which keeps
    /// the code itself for the mail.
    func requestPasswordReset(
        _ connection: ConnectionRef, requestID: String, login: String, address: String, codeHash: [UInt8], expiresAt: Int64, at time: Int64,
        into step: inout CoreStep
    ) {
        guard connections[connection] != nil else { return }
        guard configuration.passwordResetEnabled else {
            return fail(connection, requestID, CoreError(.unavailable, "password reset is not set up on this server"), into: &step)
        }
        if let wait = passwordResetThrottle.admitRequest(from: address, at: time) {
            return fail(connection, requestID, CoreError(.tooManyAttempts, "too many reset requests; try again later", retryAfterMilliseconds: wait), into: &step)
        }
        if let user = account(byLogin: login), passwordResetThrottle.admitMail(to: user.username, at: time) {
            record(.issuePasswordReset(username: user.username, codeHash: codeHash, expiresAt: expiresAt, time: time), into: &step)
            step.outputs.append(.mailPasswordReset(connection, requestID: requestID, username: user.username, email: user.email, expiresAt: expiresAt))
        }
        reply(connection, requestID, .done, into: &step)
    }

    /// First half of `password_reset`: the code checked (in constant time, against its hash),
    /// then the new password hashed by the server. Every way a code can be wrong — no such
    /// account, no code, expired, used, guessed wrong, out of attempts — is the same `invalid_code`.
    func beginPasswordReset(
        _ connection: ConnectionRef, requestID: String, login: String, address: String, codeHash: [UInt8], newPassword: String,
        at time: Int64, into step: inout CoreStep
    ) {
        guard connections[connection] != nil else { return }
        guard configuration.passwordResetEnabled else {
            return fail(connection, requestID, CoreError(.unavailable, "password reset is not set up on this server"), into: &step)
        }
        guard PasswordRules.lengths.contains(newPassword.count) else {
            return fail(connection, requestID, Self.weakPassword, into: &step)
        }
        if let wait = passwordResetThrottle.admitAttempt(from: address, at: time) {
            return fail(connection, requestID, CoreError(.tooManyAttempts, "too many reset attempts; try again later", retryAfterMilliseconds: wait), into: &step)
        }
        guard let user = account(byLogin: login), let pending = durableState.passwordResets[user.username], time < pending.expiresAt else {
            return fail(connection, requestID, Self.invalidCode, into: &step)
        }
        guard Self.constantTimeEquals(pending.codeHash, codeHash) else {
            record(.failPasswordReset(username: user.username, time: time), into: &step)
            return fail(connection, requestID, Self.invalidCode, into: &step)
        }
        if let error = Self.weakPasswordRefusal(newPassword, of: user.username) {
            return fail(connection, requestID, error, into: &step)
        }
        if let error = passwordHashes.refusal(of: .login, from: address, configuration: configuration) {
            return fail(connection, requestID, error, into: &step)
        }
        passwordHashes.begin(.login, from: address)
        step.outputs.append(.hashResetPassword(
            connection, requestID: requestID, username: user.username, codeHash: codeHash, newPassword: newPassword, address: address))
    }

    /// Second half: the code is checked again (another reset may have used it meanwhile), then
    /// the password set, the code used up, and every session of the user revoked.
    func finishPasswordReset(
        _ connection: ConnectionRef, requestID: String, username: Username, codeHash: [UInt8], credentials: Credentials, at time: Int64,
        into step: inout CoreStep
    ) {
        guard connections[connection] != nil else { return }
        guard let pending = durableState.passwordResets[username], time < pending.expiresAt, Self.constantTimeEquals(pending.codeHash, codeHash) else {
            return fail(connection, requestID, Self.invalidCode, into: &step)
        }
        record(.resetPassword(username: username, credentials: credentials, time: time), into: &step)
        let sessions = durableState.sessions.tokenHashes(of: username)
        let command = sessions.isEmpty ? nil : CoreCommand.revokeSessions(username: username, tokenHashes: sessions, time: time)
        if let command { record(command, into: &step) }
        reply(connection, requestID, .revoked(count: sessions.count), into: &step)
        if let command { tellLive(after: command, at: time, into: &step) }
    }

    /// The account a login names: an email address (with "@") or a username, in any case.
    func account(byLogin login: String) -> UserRecord? {
        login.utf8.contains(UInt8(ascii: "@"))
            ? durableState.accounts.user(withEmail: login.lowercased())
            : UsernameRules.canonical(login).flatMap { durableState.accounts[$0] }
    }

    private static func weakPasswordRefusal(_ password: String, of username: Username) -> CoreError? {
        guard PasswordRules.lengths.contains(password.count), password.lowercased() != username.lowercased() else { return weakPassword }
        return nil
    }

    /// Compares every byte whatever the first difference, so the time taken tells nothing of
    /// how much of a guessed code's hash matched.
    static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }

    private static let weakPassword = CoreError(.weakPassword, "a password is 8–128 characters and not the username")
    private static let invalidCode = CoreError(.invalidCode, "the code is wrong, used or expired; ask for a new one")
}
