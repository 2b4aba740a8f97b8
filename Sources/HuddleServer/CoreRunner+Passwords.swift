import HuddleCore
import HuddleCrypto
import HuddleIO

/// Sign-ins' password work, on the password workers (never on a loop or the core): each ends by
/// submitting the second half of its sign-in, which the core answers in the first half's place.
extension CoreRunner {
    /// Hashes in the login lane; an unknown login (no credentials) is hashed at the cost of a
    /// new password, so that its answer takes as long as a wrong password's.
    func verifyPassword(
        _ ref: ConnectionRef, _ requestID: String, _ username: Username?, _ credentials: Credentials?, _ password: String, _ address: String
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
