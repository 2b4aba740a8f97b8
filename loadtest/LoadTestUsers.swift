import HuddleClient
import HuddleProtocol

/// Names and sign-ups of the users a scenario creates. Every run gets its own random prefix,
/// so runs against the same server never collide and their users are easy to tell apart.
struct LoadTestUsers {
    let prefix = "lt\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"

    /// A valid username (protocol.md: 3–32 characters, `a-z 0-9 _`, starting with a letter).
    func username(_ index: Int) -> String { "\(prefix)_\(index)" }

    func password(_ username: String) -> String { "loadtest-\(username)" }

    /// Signs `username` up on `session` (which must be open and anonymous); the session is then
    /// authenticated. `done` gets the token, or the reason it failed.
    func signUp(_ username: String, on session: HarnessSession, done: @escaping (Result<String, SetupFailure>) -> Void) {
        let sent = session.request("signup", [
            ("username", .string(username)), ("email", .string("\(username)@loadtest.invalid")), ("password", .string(password(username))),
        ]) { reply in
            if let token = reply["result"]?["token"]?.stringValue {
                done(.success(token))
            } else {
                done(.failure(SetupFailure("signup of \(username) failed: \(JSONWriter.serialize(reply))")))
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
    /// Sends `op` and calls `done` with nil when the reply is ok, or with a description of the
    /// refusal (or of a request that could not be sent).
    func expectOK(_ op: String, _ fields: [(String, JSONValue)], done: @escaping (String?) -> Void) {
        let sent = request(op, fields) { reply in
            done(reply["ok"]?.boolValue == true ? nil : "\(op) refused: \(JSONWriter.serialize(reply))")
        }
        if !sent { done("\(op) not sent: the connection is not open") }
    }
}
