import HuddleProtocol

/// protocol.md "Authentication" and the account ops: `ping`, `signup`, `login`, `auth`,
/// `logout`, `whoami`. A successful sign-in makes its session the one the client resumes on
/// every reconnect; a logout makes the client anonymous.
extension HuddleClient {
    /// `ping`: the server's clock, in milliseconds since the Unix epoch.
    public func ping(completion: @escaping (Result<Int64, HuddleClientError>) -> Void) {
        request(.ping, resendAfterReconnect: true, reading: ReplyResult.time(in:), completion: completion)
    }

    /// `signup`: creates the account and signs this client in; the result carries the token.
    public func signUp(
        username: String, email: String, password: String, device: String? = nil,
        completion: @escaping (Result<HuddleSession, HuddleClientError>) -> Void
    ) {
        signIn(.signup(username: username, email: email, password: password, device: device ?? configuration.device), completion: completion)
    }

    /// `login` with a username or email; the result carries the token.
    public func logIn(login: String, password: String, device: String? = nil, completion: @escaping (Result<HuddleSession, HuddleClientError>) -> Void) {
        signIn(.login(login: login, password: password, device: device ?? configuration.device), completion: completion)
    }

    /// `auth`: signs this anonymous connection in with a token from an earlier sign-in.
    public func authenticate(token: String, completion: @escaping (Result<HuddleSession, HuddleClientError>) -> Void) {
        signIn(.auth(token: token)) { [self] outcome in
            // The `auth` result has no token: the one given is the session's.
            if case .success(var session) = outcome {
                session.token = token
                signedIn(session)
                completion(.success(session))
            } else {
                completion(outcome)
            }
        }
    }

    /// A sign-in op whose result is an account session: it becomes the client's session.
    func signIn(_ operation: Operation, completion: @escaping (Result<HuddleSession, HuddleClientError>) -> Void) {
        request(operation, reading: AccountSession.init(result:)) { [self] outcome in
            if case .success(let session) = outcome { signedIn(session) }
            completion(outcome)
        }
    }

    /// `logout`: revokes this session (`allDevices`: every session of the user); the result is
    /// how many were revoked. The client then reconnects anonymously, with no subscriptions.
    public func logOut(allDevices: Bool = false, completion: @escaping (Result<Int, HuddleClientError>) -> Void) {
        request(.logout(all: allDevices), reading: ReplyResult.revoked(in:)) { [self] outcome in
            if case .success = outcome { signedOut() }
            completion(outcome)
        }
    }

    /// `whoami`: the user and when the session expires (no token in the result).
    public func whoami(completion: @escaping (Result<HuddleSession, HuddleClientError>) -> Void) {
        request(.whoami, resendAfterReconnect: true, reading: AccountSession.init(result:), completion: completion)
    }
}
