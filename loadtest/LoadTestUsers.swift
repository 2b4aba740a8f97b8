import HuddleClient
import HuddleIO
import HuddleProtocol

/// Names and sign-ups of the users a scenario creates. Every run gets its own random prefix,
/// so runs against the same server never collide and their users are easy to tell apart.
struct LoadTestUsers {
    let prefix = "lt\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"

    /// A valid username (protocol.md: 3–32 characters, `a-z 0-9 _`, starting with a letter).
    func username(_ index: Int) -> String { "\(prefix)_\(index)" }

    func password(_ username: String) -> String { "loadtest-\(username)" }

    /// Signs `username` up on `session` (which must be open and anonymous); the session is then
    /// authenticated. `done` gets the token, or the reason it failed. A signup refused for the
    /// server's bounds on password hashes in flight (all of a run's signups come from one
    /// address) is sent again after the `retry_after_ms` it was given.
    func signUp(_ username: String, on session: HarnessSession, done: @escaping (Result<String, SetupFailure>) -> Void) {
        let sent = session.request(.signup(username: username, email: "\(username)@loadtest.invalid", password: password(username), device: nil)) { reply in
            if let token = reply.result.flatMap({ try? AccountSession(result: $0) })?.token {
                done(.success(token))
            } else if let error = reply.error, ["too_many_attempts", "busy"].contains(error.code), let retryAfter = error.retryAfterMilliseconds {
                _ = session.loop.schedule(after: max(1, retryAfter)) { signUp(username, on: session, done: done) }
            } else {
                done(.failure(SetupFailure("signup of \(username) failed: \(reply.text)")))
            }
        }
        if !sent { done(.failure(SetupFailure("signup of \(username): the connection is not open"))) }
    }
}

/// Why a scenario's set-up could not go on.
struct SetupFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension HarnessSession {
    /// Sends `operation` and calls `done` with nil when the reply is ok, or with a description of the
    /// refusal (or of a request that could not be sent).
    func expectOK(_ operation: Operation, done: @escaping (String?) -> Void) {
        let sent = request(operation) { reply in
            done(reply.result != nil ? nil : "\(operation.name) refused: \(reply.text)")
        }
        if !sent { done("\(operation.name) not sent: the connection is not open") }
    }
}

extension LoadTestUsers {
    /// Opens a session, signs user 0 up on it and hands `then` the token: the one account a
    /// scenario whose connections all sign in as the same user needs. A refused sign-up, or the
    /// session closing before it, aborts the measurement. The caller keeps the session (and
    /// closes it when done).
    func signUpSharedAccount(
        url: ClientURL, loop: EventLoop, options: ClientConnectionOptions, measurement: Measurement, then: @escaping (String) -> Void
    ) -> HarnessSession {
        let session = HarnessSession(url: url, loop: loop, options: options)
        var signedUp = false
        session.onOpen = {
            signUp(username(0), on: session) { outcome in
                switch outcome {
                case .success(let token):
                    signedUp = true
                    then(token)
                case .failure(let failure):
                    measurement.abort(failure.description)
                }
            }
        }
        session.onClose = { code, reason in
            if !signedUp { measurement.abort("admin connection closed: \(code?.rawValue ?? 0) \(reason)") }
        }
        session.connect()
        return session
    }
}

extension ClientConnectionOptions {
    /// These options with the session token as an `Authorization: Bearer` header, so a
    /// connection is signed in from its upgrade on.
    func bearer(_ token: String) -> ClientConnectionOptions {
        var options = self
        options.headers.append(("Authorization", "Bearer \(token)"))
        return options
    }
}
