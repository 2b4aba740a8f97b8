import ChildProcessExit
import Foundation
import HuddleCrypto
import HuddleWebSocket
import Testing

/// protocol.md "Passwords", over real sockets against the real binary: `password_change` with
/// its refusals and the other sessions revoked on request; password reset through the mail
/// webhook (a local receiver): the code mailed, never logged, single-use, replaced by a newer
/// one, ended by wrong guesses, expiring, rate-limited, the same reply for unknown accounts;
/// and used, unused and half-guessed codes across a graceful restart and a kill -9.
@Suite(.ownThread) struct ProtocolPasswordsTests {
    static let newPassword = "a brand new secret"

    private func logIn(_ login: String, password: String = ProtocolClient.password, port: Int) throws -> ProtocolClient {
        let client = try ProtocolClient(port: port)
        try client.login(login, password: password)
        return client
    }

    /// Asks for a code for `login` and returns the code the webhook got (the `count`-th request).
    private func requestCode(_ login: String, receiver: WebhookReceiver, count: Int, port: Int) async throws -> JSONObject {
        #expect(JSON.text(try ProtocolClient(port: port).ok("password_reset_request", ["login": login])) == "{}")
        let requests = try await receiver.waitForRequests(count)
        return requests[count - 1].json
    }

    @Test func changeWithItsRefusalsAndTheOtherSessionsRevoked() async throws {
        let server = try await startHuddle()
        let (phone, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let tablet = try logIn("alice", port: server.port)
        let change: (String, String) -> JSONObject = { old, new in ["old_password": old, "new_password": new] }

        #expect(try phone.errorCode("password_change", change(ProtocolClient.password, "short")) == "weak_password")
        #expect(try phone.errorCode("password_change", change(ProtocolClient.password, "ALICE")) == "weak_password")
        #expect(try phone.errorCode("password_change", change("not it at all", Self.newPassword)) == "invalid_credentials")
        #expect(try phone.errorCode("password_change", ["old_password": ProtocolClient.password]) == "bad_request")
        #expect(try ProtocolClient(port: server.port).errorCode("password_change", change(ProtocolClient.password, Self.newPassword)) == "not_authenticated")

        // The other sessions go when asked: the tablet is closed with 4001, the phone stays.
        let changed = try phone.ok("password_change", change(ProtocolClient.password, Self.newPassword).merging(["revoke_others": true]) { $1 })
        #expect(JSON.int(changed["revoked"]) == 1)
        #expect(try tablet.closeCode() == WebSocketCloseCode(rawValue: 4001))
        #expect(try phone.ok("whoami")["user"] != nil)
        #expect(try ProtocolClient(port: server.port).errorCode("login", ["login": "alice", "password": ProtocolClient.password]) == "invalid_credentials")
        let laptop = try logIn("alice", password: Self.newPassword, port: server.port)
        // Without `revoke_others` every session stays.
        #expect(JSON.int(try phone.ok("password_change", change(Self.newPassword, "third password"))["revoked"]) == 0)
        #expect(try laptop.ok("whoami")["user"] != nil)

        // Guessing the old password from a signed-in session is limited as logins are.
        for _ in 0..<5 { #expect(try phone.errorCode("password_change", change("wrong guess!", Self.newPassword)) == "invalid_credentials") }
        let limited = try phone.failure("password_change", change("third password", Self.newPassword))
        #expect(limited["code"] as? String == "too_many_attempts" && JSON.int(limited["retry_after_ms"]) != nil)
    }

    @Test func resetThroughTheMailWebhookWithEveryRefusal() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let server = try await startHuddle(["--password-reset-webhook", receiver.url, "--password-reset-webhook-secret", "m4il"])
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)
        try ProtocolClient.signedUp("carol", port: server.port)
        let anonymous = try ProtocolClient(port: server.port)

        // An unknown account gets the same reply and no mail; bob's mail carries his code.
        #expect(JSON.text(try anonymous.ok("password_reset_request", ["login": "nobody@example.com"])) == "{}")
        let first = try await requestCode("BOB@example.com", receiver: receiver, count: 1, port: server.port)
        #expect(first["username"] as? String == "bob" && first["email"] as? String == "bob@example.com")
        let firstCode = try #require(first["code"] as? String)
        #expect(firstCode.count == 8 && firstCode.allSatisfy(\.isNumber))
        let expiresAt = try #require(JSON.int(first["expires_at"]))
        #expect(abs(expiresAt - Int(Date().timeIntervalSince1970 * 1000) - 900_000) < 60_000)
        let signed = try #require(receiver.requests[0].headers["x-huddle-signature"])
        #expect(signed == "sha256=" + Crypto.hmacSHA256(key: Array("m4il".utf8), message: receiver.requests[0].body).map { String(format: "%02x", $0) }.joined())

        // A newer code replaces the first.
        let secondCode = try #require(try await requestCode("bob", receiver: receiver, count: 2, port: server.port)["code"] as? String)
        let reset: (String, String, String) -> JSONObject = { login, code, password in ["login": login, "code": code, "new_password": password] }
        #expect(try anonymous.errorCode("password_reset", reset("bob", firstCode, Self.newPassword)) == "invalid_code")
        // Refusals that say nothing about the account: unknown user, wrong code, weak password.
        #expect(try anonymous.errorCode("password_reset", reset("nobody", secondCode, Self.newPassword)) == "invalid_code")
        #expect(try anonymous.errorCode("password_reset", reset("bob", secondCode, "short")) == "weak_password")

        // The right code sets the password and revokes every session of bob's.
        let done = try anonymous.ok("password_reset", reset("bob@example.com", " \(secondCode) ", Self.newPassword))
        #expect(JSON.int(done["revoked"]) == 1)
        #expect(try bob.closeCode() == WebSocketCloseCode(rawValue: 4001))
        _ = try logIn("bob", password: Self.newPassword, port: server.port)
        // Used: it never works again.
        #expect(try anonymous.errorCode("password_reset", reset("bob", secondCode, "yet another one")) == "invalid_code")

        // Guessed: five wrong codes end it, the right one is then refused too.
        let thirdCode = try #require(try await requestCode("bob", receiver: receiver, count: 3, port: server.port)["code"] as? String)
        let wrong = thirdCode == "00000000" ? "11111111" : "00000000"
        for _ in 0..<5 { #expect(try anonymous.errorCode("password_reset", reset("bob", wrong, "yet another one")) == "invalid_code") }
        #expect(try anonymous.errorCode("password_reset", reset("bob", thirdCode, "yet another one")) == "invalid_code")

        // Per account: 3 mails an hour, then silently none (saying so would tell the account
        // exists); carol's mail is the next the webhook gets.
        #expect(JSON.text(try anonymous.ok("password_reset_request", ["login": "bob"])) == "{}")
        let carols = try await requestCode("carol", receiver: receiver, count: 4, port: server.port)
        #expect(carols["username"] as? String == "carol")
        // Per address: 10 requests an hour (6 made so far).
        for _ in 0..<4 { try anonymous.ok("password_reset_request", ["login": "nobody"]) }
        let limited = try anonymous.failure("password_reset_request", ["login": "carol"])
        #expect(limited["code"] as? String == "too_many_attempts" && JSON.int(limited["retry_after_ms"]) != nil)

        // The codes are in no log line and no metric.
        let metrics = try HTTPExchange(port: server.port, "GET", "/metrics").body
        #expect(metrics.contains("huddle_password_reset_mails_sent_total 4"))
        for request in receiver.requests {
            let code = try #require(request.json["code"] as? String)
            #expect(!server.logText.contains(code) && !metrics.contains(code))
        }
    }

    @Test func resetIsUnavailableWithoutTheWebhookAndCodesExpire() async throws {
        let plain = try await startHuddle()
        #expect(try ProtocolClient(port: plain.port).errorCode("password_reset_request", ["login": "bob"]) == "unavailable")
        #expect(try ProtocolClient(port: plain.port).errorCode("password_reset", ["login": "bob", "code": "12345678", "new_password": Self.newPassword]) == "unavailable")

        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let server = try await startHuddle(["--password-reset-webhook", receiver.url, "--password-reset-code-ttl", "1"])
        try ProtocolClient.signedUp("bob", port: server.port)
        let code = try #require(try await requestCode("bob", receiver: receiver, count: 1, port: server.port)["code"] as? String)
        let expiresAt = try #require(JSON.int(receiver.requests[0].json["expires_at"]))
        // Waits out the code's lifetime (a deadline, not a proof that nothing happened).
        while Int(Date().timeIntervalSince1970 * 1000) <= expiresAt { try await Task.sleep(for: .milliseconds(100)) }
        let expired = ["login": "bob", "code": code, "new_password": Self.newPassword]
        #expect(try ProtocolClient(port: server.port).errorCode("password_reset", expired) == "invalid_code")
    }

    @Test func badResetFlagsStopTheStartWithAClearError() async throws {
        let cases: [([String], String)] = [
            (["--password-reset-webhook", "ftp://127.0.0.1/hook"], "--password-reset-webhook: the scheme must be http or https"),
            (["--password-reset-webhook-secret", "x"], "need --password-reset-webhook"),
            (["--password-reset-webhook", "http://127.0.0.1:9/hook", "--password-reset-webhook-ca", "ca.pem"], "--password-reset-webhook-ca is for an https:// webhook"),
            (["--password-reset-code-ttl", "0"], "--password-reset-code-ttl must be positive"),
        ]
        for (flags, message) in cases {
            let output = try await runProcess(ServerProcess.binary.path, ["--port", "0"] + flags, timeout: 20)
            #expect(output.status != 0 && output.stderr.contains(message), "\(flags): \(output.stderr)")
        }
    }

    @Test func aFailedMailIsRetried() async throws {
        let receiver = try WebhookReceiver(statuses: [503])
        defer { receiver.stop() }
        let server = try await startHuddle(["--password-reset-webhook", receiver.url])
        try ProtocolClient.signedUp("bob", port: server.port)
        try ProtocolClient(port: server.port).ok("password_reset_request", ["login": "bob"])
        let attempts = try await receiver.waitForRequests(2)
        #expect(attempts[0].body == attempts[1].body, "the same mail, sent again after the 503")
        let metrics = try HTTPExchange(port: server.port, "GET", "/metrics").body
        #expect(metrics.contains("huddle_password_reset_mails_failed_total 1"))
    }

    @Test func codesSurviveAGracefulRestartAndAKill() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let flags = ["--password-reset-webhook", receiver.url]
        let reset: (String, String) -> JSONObject = { login, code in ["login": login, "code": code, "new_password": Self.newPassword] }
        var codes: [String: String] = [:]
        do {
            let server = try await startHuddle(flags, dataDirectory: data)
            for name in ["bob", "carol", "dave", "erin"] { try ProtocolClient.signedUp(name, port: server.port) }
            for (index, name) in ["bob", "carol", "dave"].enumerated() {
                codes[name] = try await requestCode(name, receiver: receiver, count: index + 1, port: server.port)["code"] as? String
            }
            try ProtocolClient(port: server.port).ok("password_reset", reset("bob", codes["bob"]!))
            let wrong = codes["dave"] == "00000000" ? "11111111" : "00000000"
            for _ in 0..<3 { #expect(try ProtocolClient(port: server.port).errorCode("password_reset", reset("dave", wrong)) == "invalid_code") }
            #expect(try await server.stop() == 0)
        }
        do {
            let server = try await startHuddle(flags, dataDirectory: data)
            // Used stays used; an unused code still works; the wrong tries were kept.
            #expect(try ProtocolClient(port: server.port).errorCode("password_reset", reset("bob", codes["bob"]!)) == "invalid_code")
            try ProtocolClient(port: server.port).ok("password_reset", reset("carol", codes["carol"]!))
            let wrong = codes["dave"] == "00000000" ? "11111111" : "00000000"
            for _ in 0..<2 { #expect(try ProtocolClient(port: server.port).errorCode("password_reset", reset("dave", wrong)) == "invalid_code") }
            #expect(try ProtocolClient(port: server.port).errorCode("password_reset", reset("dave", codes["dave"]!)) == "invalid_code")
            codes["erin"] = try await requestCode("erin", receiver: receiver, count: 4, port: server.port)["code"] as? String
            try await server.kill9()
        }
        let server = try await startHuddle(flags, dataDirectory: data)
        #expect(try ProtocolClient(port: server.port).errorCode("password_reset", reset("carol", codes["carol"]!)) == "invalid_code")
        try ProtocolClient(port: server.port).ok("password_reset", reset("erin", codes["erin"]!))
        for name in ["bob", "carol", "erin"] { _ = try logIn(name, password: Self.newPassword, port: server.port) }
    }
}
