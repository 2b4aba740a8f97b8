import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// protocol.md "Moderation", suspension, over real sockets against the real binary: the
/// operator suspends an account through the HTTP API, its live connections close with 4003,
/// every sign-in is refused `account_suspended` until it ends or is lifted, the refusals of the
/// calls, and all of it across a restart, graceful or SIGKILL.
@Suite(.ownThread) struct ProtocolSuspensionTests {
    static let key = "test-api-key-0123456789"

    private func post(_ port: Int, _ path: String, _ body: String = "{}", key: String? = Self.key) throws -> HTTPExchange {
        try HTTPExchange(port: port, "POST", path, body: body, key: key)
    }

    private func signInError(_ port: Int, token: String) throws -> JSONObject {
        try ProtocolClient(port: port).failure("auth", ["token": token])
    }

    private func loginError(_ port: Int, _ name: String) throws -> JSONObject {
        try ProtocolClient(port: port).failure("login", ["login": name, "password": ProtocolClient.password])
    }

    @Test func aSuspensionClosesTheUsersConnectionsAndRefusesEverySignInUntilLifted() async throws {
        let server = try await startHuddle(["--api-key", Self.key])
        let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let phone = try ProtocolClient(port: server.port, credential: .header(token))
        _ = try phone.nextEvent("session")
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)

        let suspended = try post(server.port, "/api/v1/users/Alice/suspend", #"{"reason": "spam in the lobby"}"#)
        #expect(suspended.status == 200 && JSON.int(suspended.json?["closed"]) == 2, "\(suspended.status) \(suspended.body)")
        #expect(try alice.closeCode() == WebSocketCloseCode(rawValue: 4003))
        #expect(try phone.closeCode() == WebSocketCloseCode(rawValue: 4003))
        #expect(try bob.ok("ping")["time"] != nil, "nobody else is touched")
        // Every way back in is refused, and says why; no end was given, so no retry_after_ms.
        for refusal in [try loginError(server.port, "alice"), try signInError(server.port, token: token)] {
            #expect(refusal["code"] as? String == "account_suspended" && refusal["retry_after_ms"] == nil, "\(refusal)")
            #expect((refusal["message"] as? String)?.contains("spam in the lobby") == true)
        }
        let upgrade = try ProtocolClient(port: server.port, credential: .header(token))
        let failed = try upgrade.nextEvent("auth_failed")
        #expect((failed["error"] as? JSONObject)?["code"] as? String == "account_suspended", "\(failed)")
        // A wrong password is still just that: the suspension is told only to who proves the account.
        #expect(try ProtocolClient(port: server.port).errorCode("login", ["login": "alice", "password": "wrong-password-1"]) == "invalid_credentials")

        // A suspension with an end: its refusal says how long is left.
        let until = Int(Date().timeIntervalSince1970 * 1000) + 3_600_000
        #expect(try post(server.port, "/api/v1/users/bob/suspend", #"{"reason": "a break", "until": \#(until)}"#).status == 200)
        #expect(try bob.closeCode() == WebSocketCloseCode(rawValue: 4003))
        let timed = try loginError(server.port, "bob")
        #expect(timed["code"] as? String == "account_suspended")
        #expect((JSON.int(timed["retry_after_ms"]) ?? 0) > 3_000_000, "\(timed)")

        // The refusals of the calls.
        #expect(try post(server.port, "/api/v1/users/nobody/suspend", #"{"reason": "x"}"#).errorCode == "user_not_found")
        #expect(try post(server.port, "/api/v1/users/nobody/suspend", #"{"reason": "x"}"#).status == 404)
        #expect(try post(server.port, "/api/v1/users/bob/suspend", "{}").status == 400)
        #expect(try post(server.port, "/api/v1/users/bob/suspend", #"{"reason": ""}"#).status == 400)
        #expect(try post(server.port, "/api/v1/users/bob/suspend", #"{"reason": "x", "until": 1000}"#).errorCode == "bad_request")
        #expect(try post(server.port, "/api/v1/users/bob/suspend", #"{"reason": "x"}"#, key: "wrong").status == 401)
        #expect(try HTTPExchange(port: server.port, "GET", "/api/v1/users/bob/suspend", key: Self.key).status == 405)
        #expect(try post(server.port, "/api/v1/users/bob/promote").status == 404)

        // Lifted: the tokens the devices hold work again, and so does a login.
        #expect(try post(server.port, "/api/v1/users/alice/unsuspend").status == 200)
        let unsuspendedAgain = try post(server.port, "/api/v1/users/alice/unsuspend")
        #expect(unsuspendedAgain.status == 400 && unsuspendedAgain.errorCode == "not_suspended")
        let back = try ProtocolClient.authenticated(token, port: server.port)
        #expect((try back.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "alice")
        #expect(try ProtocolClient(port: server.port).login("alice").isEmpty == false)
        #expect(try await server.stop() == 0)
    }

    /// After a graceful restart (a snapshot) or SIGKILL (the log replayed) the suspension holds,
    /// and a lifted one stays lifted.
    @Test(arguments: ["graceful", "kill"])
    func aSuspensionSurvivesARestart(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var tokens: [String: String] = [:]
        do {
            let server = try await DurableServer.start(["--fsync", "always", "--api-key", Self.key], dataDirectory: data)
            for name in ["alice", "bob"] { tokens[name] = try ProtocolClient.signedUp(name, port: server.port).1 }
            #expect(try post(server.port, "/api/v1/users/alice/suspend", #"{"reason": "spam"}"#).status == 200)
            #expect(try post(server.port, "/api/v1/users/bob/suspend", #"{"reason": "spam"}"#).status == 200)
            #expect(try post(server.port, "/api/v1/users/bob/unsuspend").status == 200)
            if restart == "graceful" {
                #expect(try await server.stop() == 0)
            } else {
                server.kill9()
            }
        }
        let server = try await DurableServer.start(["--fsync", "always", "--api-key", Self.key], dataDirectory: data)
        #expect(try signInError(server.port, token: tokens["alice"]!)["code"] as? String == "account_suspended")
        #expect(try loginError(server.port, "alice")["code"] as? String == "account_suspended")
        let bob = try ProtocolClient.authenticated(tokens["bob"]!, port: server.port)
        #expect((try bob.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "bob")
        #expect(try post(server.port, "/api/v1/users/alice/unsuspend").status == 200)
        #expect(try ProtocolClient.authenticated(tokens["alice"]!, port: server.port).ok("ping")["time"] != nil)
        #expect(try await server.stop() == 0)
    }
}
