import HuddleCore
import HuddleCrypto
import HuddleIO

/// Sign-ins' password work, on the password workers (never on a loop or the core): each ends by
/// submitting the second half of its sign-in, which the core answers in the first half's place.
extension CoreRunner {
    /// Hashes in the login lane; an unknown login (no credentials) is hashed at the cost of a
    /// new password, so that its answer takes as long as a wrong password's. In cluster mode
    /// the limit shared by the nodes is asked first: a refused attempt is answered as the core's
    /// own throttle answers (`too_many_attempts`), an unreachable Redis `unavailable`.
    func verifyPassword(
        _ ref: ConnectionRef, _ requestID: String, _ username: Username?, _ credentials: Credentials?, _ password: String, _ address: String
    ) {
        guard let shared = sharedLoginThrottle else {
            return hashLogin(ref, requestID, username, credentials, password, address, succeeded: nil)
        }
        // Keyed as the core keys its throttle: an unknown login under its own spelling.
        let account = username ?? (secrets[ref]?[requestID]?.login ?? "").lowercased()
        shared.admit(account, address) { [self] admission in
            let refusal: CoreError
            switch admission {
            case .allowed:
                return hashLogin(ref, requestID, username, credentials, password, address) { [loop] in
                    loop.execute { shared.succeeded(account, address) }
                }
            case .refused(let wait):
                refusal = CoreError(.tooManyAttempts, "too many failed logins; try again later", retryAfterMilliseconds: wait)
            case .unavailable:
                refusal = CoreError(.unavailable, "logins cannot be checked right now; try again later")
            }
            let session = NewSession(tokenHash: [], expiresAt: 0, device: nil)
            let finish = CoreRequestBody.finishLogin(username: username, passwordMatched: false, address: address, session: session, refusal: refusal)
            submit(CoreRequest(connection: ref, requestID: requestID, finish), op: "login")
        }
    }

    /// `succeeded` runs on the password worker when the password matched.
    private func hashLogin(
        _ ref: ConnectionRef, _ requestID: String, _ username: Username?, _ credentials: Credentials?, _ password: String, _ address: String,
        succeeded: (@Sendable () -> Void)?
    ) {
        let device = secrets[ref]?[requestID]?.device
        let ttl = Int64(configuration.sessionTTLMilliseconds)
        let iterations = configuration.kdfIterations
        passwordHashes.run(.login) { [self] in
            let matched: Bool
            if let credentials {
                let hash = Crypto.pbkdf2SHA256(password: password, salt: credentials.salt, iterations: credentials.iterations, length: credentials.hash.count)
                matched = Crypto.constantTimeEquals(hash, credentials.hash)
            } else {
                _ = Crypto.pbkdf2SHA256(password: password, salt: Crypto.randomBytes(16), iterations: iterations)
                matched = false
            }
            let token = SessionToken.generate()
            let session = NewSession(tokenHash: SessionToken.hash(token), expiresAt: WallClock.milliseconds() + ttl, device: device)
            let finish = CoreRequestBody.finishLogin(username: username, passwordMatched: matched, address: address, session: session)
            submit(CoreRequest(connection: ref, requestID: requestID, finish), op: "login", token: matched ? token : nil)
            if matched { succeeded?() }
        }
    }

    /// `password_change` on a password worker (login lane): the old password verified against
    /// the verifier the core handed over, and only if it matches, the new one hashed.
    func changePassword(
        _ ref: ConnectionRef, _ requestID: String, _ username: Username, _ credentials: Credentials, oldPassword: String, newPassword: String,
        revokeOthers: Bool, address: String
    ) {
        let iterations = configuration.kdfIterations
        passwordHashes.run(.login) { [self] in
            let hash = Crypto.pbkdf2SHA256(password: oldPassword, salt: credentials.salt, iterations: credentials.iterations, length: credentials.hash.count)
            var newCredentials: Credentials?
            if Crypto.constantTimeEquals(hash, credentials.hash) {
                let salt = Crypto.randomBytes(16)
                newCredentials = Credentials(salt: salt, hash: Crypto.pbkdf2SHA256(password: newPassword, salt: salt, iterations: iterations), iterations: iterations)
            }
            let finish = CoreRequestBody.finishPasswordChange(
                username: username, verified: credentials, newCredentials: newCredentials, revokeOthers: revokeOthers, address: address)
            submit(CoreRequest(connection: ref, requestID: requestID, finish), op: nil)
        }
    }

    /// `password_reset` once its code matched: the new password hashed (login lane).
    func hashResetPassword(_ ref: ConnectionRef, _ requestID: String, _ username: Username, codeHash: [UInt8], newPassword: String, address: String) {
        let iterations = configuration.kdfIterations
        passwordHashes.run(.login) { [self] in
            let salt = Crypto.randomBytes(16)
            let credentials = Credentials(salt: salt, hash: Crypto.pbkdf2SHA256(password: newPassword, salt: salt, iterations: iterations), iterations: iterations)
            let finish = CoreRequestBody.finishPasswordReset(username: username, codeHash: codeHash, credentials: credentials, address: address)
            submit(CoreRequest(connection: ref, requestID: requestID, finish), op: nil)
        }
    }

    /// Hashes a signup's password in the signup lane (behind every waiting login), then hands
    /// the core only the hash and the facts its rules need about the password.
    func hashNewPassword(_ ref: ConnectionRef, _ requestID: String, username: String, email: String, password: String, address: String) {
        let device = secrets[ref]?[requestID]?.device
        let ttl = Int64(configuration.sessionTTLMilliseconds)
        let iterations = configuration.kdfIterations
        passwordHashes.run(.signUp) { [self] in
            let salt = Crypto.randomBytes(16)
            let credentials = Credentials(salt: salt, hash: Crypto.pbkdf2SHA256(password: password, salt: salt, iterations: iterations), iterations: iterations)
            let token = SessionToken.generate()
            let session = NewSession(tokenHash: SessionToken.hash(token), expiresAt: WallClock.milliseconds() + ttl, device: device)
            let signUp = CoreRequestBody.signUp(
                username: username, email: email, passwordLength: password.count,
                passwordEqualsUsername: password.lowercased() == username.lowercased(), address: address,
                credentials: credentials, session: session)
            // Counted in the op's latency once, by its first half.
            submit(CoreRequest(connection: ref, requestID: requestID, signUp), op: nil, token: token)
        }
    }
}
