import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// protocol.md "Authentication" and the account ops (signup, login, auth, logout, whoami), over
/// real sockets against the real binary.
@Suite(.ownThread) struct ProtocolAccountTests {
    static let thirtyDays = 30 * 24 * 3600 * 1000

    @Test func signupReturnsUserTokenAndExpiryAndAuthenticates() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let before = JSON.nowMilliseconds
        let result = try client.ok("signup", ["username": "alice", "email": "alice@example.com", "password": ProtocolClient.password, "device": "alice's iPhone"])
        let user = try #require(result["user"] as? JSONObject)
        #expect(user["username"] as? String == "alice")
        #expect(user["email"] as? String == "alice@example.com")
        let token = try #require(result["token"] as? String)
        #expect(token.count == 43)
        #expect(token.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }, "not URL-safe base64: \(token)")
        let expiresAt = try #require(JSON.int(result["expires_at"]))
        #expect(abs(expiresAt - (before + Self.thirtyDays)) < 60_000, "expires_at \(expiresAt) is not 30 days from now")
        let whoami = try client.ok("whoami")
        #expect((whoami["user"] as? JSONObject)?["username"] as? String == "alice")
        #expect(JSON.int(whoami["expires_at"]) == expiresAt)
    }

    @Test func tokensAreDistinctPerSession() async throws {
        let server = try await startHuddle()
        let (_, first) = try ProtocolClient.signedUp("alice", port: server.port)
        let second = try ProtocolClient(port: server.port).login("alice")
        #expect(first != second)
    }

    @Test func usernameIsCaseInsensitiveAndStoredLowercase() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let result = try client.ok("signup", ["username": "Alice_01", "email": "Alice@Example.com", "password": ProtocolClient.password])
        #expect((result["user"] as? JSONObject)?["username"] as? String == "alice_01")
        #expect((result["user"] as? JSONObject)?["email"] as? String == "alice@example.com", "the email comes back as stored: lowercase")
        let other = try ProtocolClient(port: server.port)
        #expect(try other.errorCode("signup", ["username": "ALICE_01", "email": "x@example.com", "password": ProtocolClient.password]) == "username_taken")
    }

    @Test(arguments: [
        "ab", String(repeating: "a", count: 33), "1alice", "_alice", "al-ice", "al ice", "al.ice", "alïce", "", "alice!",
    ])
    func invalidUsername(username: String) async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        #expect(try client.errorCode("signup", ["username": username, "email": "a@example.com", "password": ProtocolClient.password]) == "invalid_username", "\(username)")
        #expect(try client.errorCode("whoami") == "not_authenticated", "a failed signup must not authenticate")
    }

    @Test func usernameBoundariesAreAccepted() async throws {
        let server = try await startHuddle()
        for (index, name) in ["abc", "a" + String(repeating: "b", count: 31), "z_9"].enumerated() {
            let client = try ProtocolClient(port: server.port)
            _ = try client.ok("signup", ["username": name, "email": "u\(index)@example.com", "password": ProtocolClient.password])
        }
    }

    @Test(arguments: [
        "alice", "@example.com", "alice@", "alice@example", "a@b@example.com", "",
        String(repeating: "a", count: 243) + "@example.com",  // 255 characters
    ])
    func invalidEmail(email: String) async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        #expect(try client.errorCode("signup", ["username": "alice", "email": email, "password": ProtocolClient.password]) == "invalid_email", "\(email)")
    }

    @Test func emailOf254CharactersIsAccepted() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let email = String(repeating: "a", count: 242) + "@example.com"
        #expect(email.count == 254)
        _ = try client.ok("signup", ["username": "alice", "email": email, "password": ProtocolClient.password])
    }

    @Test(arguments: ["short77", String(repeating: "p", count: 129), "alicealice"])
    func weakPassword(password: String) async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        #expect(try client.errorCode("signup", ["username": "alicealice", "email": "a@example.com", "password": password]) == "weak_password")
    }

    @Test func passwordBoundariesAreAccepted() async throws {
        let server = try await startHuddle()
        _ = try ProtocolClient(port: server.port).signup("alice", password: "eight888")
        _ = try ProtocolClient(port: server.port).signup("bob", password: String(repeating: "p", count: 128))
        // Characters, not bytes: 128 non-ASCII characters are 256 bytes of UTF-8.
        _ = try ProtocolClient(port: server.port).signup("carol", password: String(repeating: "é", count: 128))
    }

    @Test func takenUsernameAndEmailAreCaseInsensitive() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice", email: "alice@example.com")
        let client = try ProtocolClient(port: server.port)
        #expect(try client.errorCode("signup", ["username": "alice", "email": "other@example.com", "password": ProtocolClient.password]) == "username_taken")
        #expect(try client.errorCode("signup", ["username": "ALICE", "email": "other@example.com", "password": ProtocolClient.password]) == "username_taken")
        #expect(try client.errorCode("signup", ["username": "bob", "email": "alice@example.com", "password": ProtocolClient.password]) == "email_taken")
        #expect(try client.errorCode("signup", ["username": "bob", "email": "ALICE@Example.COM", "password": ProtocolClient.password]) == "email_taken")
        try client.signup("bob")
    }

    @Test func deviceLabelIsCountedInCharacters() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        _ = try client.ok("signup", ["username": "alice", "email": "a@example.com", "password": ProtocolClient.password, "device": String(repeating: "é", count: 64)])
    }

    @Test func deviceLabelOver64CharactersIsRefused() async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        let answer = try client.request("signup", ["username": "alice", "email": "a@example.com", "password": ProtocolClient.password, "device": String(repeating: "d", count: 65)])
        #expect(JSON.bool(answer["ok"]) == false, "\(JSON.text(answer))")
        _ = try client.ok("signup", ["username": "alice", "email": "a@example.com", "password": ProtocolClient.password, "device": String(repeating: "d", count: 64)])
    }

    @Test func loginByUsernameAndByEmailInAnyCase() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice", email: "alice@example.com")
        for login in ["alice", "ALICE", "alice@example.com", "Alice@EXAMPLE.com"] {
            let client = try ProtocolClient(port: server.port)
            let result = try client.ok("login", ["login": login, "password": ProtocolClient.password, "device": "test"])
            let user = try #require(result["user"] as? JSONObject, "\(login)")
            #expect(user["username"] as? String == "alice", "\(login)")
            #expect(user["email"] as? String == "alice@example.com", "\(login)")
            #expect((result["token"] as? String)?.count == 43, "\(login)")
            #expect(JSON.int(result["expires_at"]) != nil, "\(login)")
            #expect((try client.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "alice", "\(login)")
        }
    }

    @Test func wrongPasswordAndUnknownUserAreNotToldApart() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice")
        let client = try ProtocolClient(port: server.port)
        let wrong = try client.failure("login", ["login": "alice", "password": "not the password"])
        let unknown = try client.failure("login", ["login": "nobody", "password": ProtocolClient.password])
        let unknownEmail = try client.failure("login", ["login": "nobody@example.com", "password": ProtocolClient.password])
        #expect(wrong["code"] as? String == "invalid_credentials")
        #expect(unknown["code"] as? String == "invalid_credentials")
        #expect(unknownEmail["code"] as? String == "invalid_credentials")
        #expect(wrong["message"] as? String == unknown["message"] as? String, "the messages tell the cases apart")
        #expect(try client.errorCode("whoami") == "not_authenticated")
    }

    @Test func fiveFailuresFromAnAddressLockThatAddressOutOfTheAccount() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice")
        let client = try ProtocolClient(port: server.port, sourceAddress: "127.0.0.2")
        for attempt in 1...5 {
            #expect(try client.errorCode("login", ["login": "alice", "password": "wrong password \(attempt)"]) == "invalid_credentials", "attempt \(attempt)")
        }
        let locked = try client.failure("login", ["login": "alice", "password": "wrong password 6"])
        #expect(locked["code"] as? String == "too_many_attempts")
        let retry = try #require(JSON.int(locked["retry_after_ms"]), "\(JSON.text(locked))")
        #expect(retry > 0 && retry <= 15 * 60 * 1000)
        // From that address, the right password does not get through either, by username or by email.
        #expect(try client.errorCode("login", ["login": "alice", "password": ProtocolClient.password]) == "too_many_attempts")
        #expect(try client.errorCode("login", ["login": "alice@example.com", "password": ProtocolClient.password]) == "too_many_attempts")
        // Another account is not affected.
        try ProtocolClient(port: server.port).signup("bob")
        try ProtocolClient(port: server.port, sourceAddress: "127.0.0.2").login("bob")
    }

    /// Issue 12: five wrong guesses by a stranger locked the account's owner out for 15
    /// minutes. The stranger's address is locked out of the account; the owner, from another
    /// address, is at most slowed down (one attempt per second on an account many addresses
    /// fail on) and gets in with the right password.
    @Test func aStrangersGuessesDoNotLockTheOwnerOut() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice")
        let stranger = try ProtocolClient(port: server.port, sourceAddress: "127.0.0.2")
        for attempt in 1...5 {
            #expect(try stranger.errorCode("login", ["login": "alice", "password": "guess \(attempt)"]) == "invalid_credentials")
        }
        #expect(try stranger.errorCode("login", ["login": "alice", "password": "guess 6"]) == "too_many_attempts")
        // Two more strangers at once: the account is over its failure count, so attempts on it
        // are spaced; the second is told to wait, for at most a second.
        let second = try ProtocolClient(port: server.port, sourceAddress: "127.0.0.3")
        let third = try ProtocolClient(port: server.port, sourceAddress: "127.0.0.4")
        let secondID = try second.sendRequest("login", ["login": "alice", "password": "guess 7"])
        let thirdID = try third.sendRequest("login", ["login": "alice", "password": "guess 8"])
        let codes = [try second.reply(to: secondID), try third.reply(to: thirdID)].map { ($0["error"] as? JSONObject) }
        #expect(codes.compactMap { $0?["code"] as? String }.sorted() == ["invalid_credentials", "too_many_attempts"], "\(codes)")
        for error in codes where error?["code"] as? String == "too_many_attempts" {
            let retry = JSON.int(error?["retry_after_ms"]) ?? 0
            #expect(retry > 0 && retry <= 1000, "the account backoff is at most a second: \(retry)")
        }
        // The owner gets in: at once, or after the backoff it is told.
        let owner = try ProtocolClient(port: server.port)
        var answer = try owner.request("login", ["login": "alice", "password": ProtocolClient.password])
        if let error = answer["error"] as? JSONObject {
            #expect(error["code"] as? String == "too_many_attempts")
            let retry = try #require(JSON.int(error["retry_after_ms"]))
            try #require(retry <= 1000, "the owner is locked out for \(retry) ms")
            try await Task.sleep(for: .milliseconds(retry + 50))
            answer = try owner.request("login", ["login": "alice", "password": ProtocolClient.password])
        }
        #expect(JSON.bool(answer["ok"]) == true, "\(JSON.text(answer))")
    }

    @Test func successClearsTheAccountFailureCount() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice")
        let client = try ProtocolClient(port: server.port)
        for _ in 1...4 {
            #expect(try client.errorCode("login", ["login": "alice", "password": "wrong password"]) == "invalid_credentials")
        }
        try ProtocolClient(port: server.port).login("alice")
        for attempt in 1...5 {
            #expect(try client.errorCode("login", ["login": "alice", "password": "wrong password"]) == "invalid_credentials", "attempt \(attempt) after the success")
        }
        #expect(try client.errorCode("login", ["login": "alice", "password": "wrong password"]) == "too_many_attempts")
    }

    /// Logins still being checked count toward the limit: eight guesses sent at once, the right
    /// password last, get five answers and three refusals, and the right password is not let in.
    @Test func pipelinedGuessesDoNotGetAroundTheLimit() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice")
        let client = try ProtocolClient(port: server.port)
        let guesses = (1...7).map { ("login", ["login": "alice", "password": "wrong password \($0)"] as JSONObject) }
            + [("login", ["login": "alice", "password": ProtocolClient.password] as JSONObject)]
        let ids = try client.sendBatch(guesses)
        var byID: [String: JSONObject] = [:]
        for _ in ids {
            let reply = try client.nextReply()
            byID[reply["id"] as? String ?? "?"] = reply
        }
        let codes = ids.map { (byID[$0]?["error"] as? JSONObject)?["code"] as? String ?? "ok" }
        #expect(codes.filter { $0 == "invalid_credentials" }.count == 5, "\(codes)")
        #expect(codes.filter { $0 == "too_many_attempts" }.count == 3, "\(codes)")
        #expect(codes.last == "too_many_attempts", "the right password, guessed sixth or later, is refused: \(codes)")
        for id in ids where (byID[id]?["error"] as? JSONObject)?["code"] as? String == "too_many_attempts" {
            #expect((JSON.int((byID[id]?["error"] as? JSONObject)?["retry_after_ms"]) ?? 0) > 0)
        }
        #expect(try client.errorCode("whoami") == "not_authenticated")
    }

    @Test func twentyFailuresLockTheClientAddress() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice")
        let client = try ProtocolClient(port: server.port)
        // Twenty failures over several accounts, none of which reaches its own limit of 5.
        for attempt in 0..<20 {
            let code = try client.errorCode("login", ["login": "user\(attempt / 4)", "password": "wrong password"])
            #expect(code == "invalid_credentials", "attempt \(attempt + 1)")
        }
        let locked = try client.failure("login", ["login": "user9", "password": "wrong password"])
        #expect(locked["code"] as? String == "too_many_attempts")
        #expect((JSON.int(locked["retry_after_ms"]) ?? 0) > 0, "\(JSON.text(locked))")
        // The limit is per address, not per connection.
        let other = try ProtocolClient(port: server.port)
        #expect(try other.errorCode("login", ["login": "alice", "password": ProtocolClient.password]) == "too_many_attempts")
    }

    @Test func authWithAGoodToken() async throws {
        let server = try await startHuddle()
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let client = try ProtocolClient(port: server.port)
        let result = try client.ok("auth", ["token": token])
        #expect((result["user"] as? JSONObject)?["username"] as? String == "alice")
        #expect((result["user"] as? JSONObject)?["email"] as? String == "alice@example.com")
        #expect(result["token"] == nil, "auth does not hand out a token")
        #expect(JSON.int(result["expires_at"]) != nil)
        #expect((try client.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "alice")
    }

    @Test(arguments: ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "x", "", "not a token at all, with spaces and ü"])
    func authWithAnUnknownToken(token: String) async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice")
        let client = try ProtocolClient(port: server.port)
        #expect(try client.errorCode("auth", ["token": token]) == "invalid_token")
        #expect(try client.errorCode("whoami") == "not_authenticated")
    }

    @Test func expiredTokenIsRefusedEverywhere() async throws {
        let server = try await startHuddle(["--session-ttl", "1"])
        let client = try ProtocolClient(port: server.port)
        let before = JSON.nowMilliseconds
        let result = try client.ok("signup", ["username": "alice", "email": "a@example.com", "password": ProtocolClient.password])
        let token = try #require(result["token"] as? String)
        let expiresAt = try #require(JSON.int(result["expires_at"]))
        #expect(expiresAt >= before + 1000 && expiresAt < before + 5000, "expires_at \(expiresAt - before) ms from now")
        try await Task.sleep(for: .milliseconds(1500))
        #expect(try ProtocolClient(port: server.port).errorCode("auth", ["token": token]) == "token_expired")
        for credential in [ProtocolClient.Credential.header(token), .subprotocol(token)] {
            let late = try ProtocolClient(port: server.port, credential: credential)
            let failed = try late.nextEvent("auth_failed")
            #expect((failed["error"] as? JSONObject)?["code"] as? String == "token_expired")
            #expect(try late.closeCode() == WebSocketCloseCode(rawValue: 4001))
        }
        // A login still works and gets a fresh token.
        try ProtocolClient(port: server.port).login("alice")
    }

    @Test func logoutRevokesThisSessionAndClosesWith4001() async throws {
        let server = try await startHuddle()
        let (client, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let sameSession = try ProtocolClient.authenticated(token, port: server.port)
        let otherSession = try ProtocolClient(port: server.port)
        let otherToken = try otherSession.login("alice")
        let result = try client.ok("logout")
        #expect(JSON.int(result["revoked"]) == 1)
        #expect(try client.closeCode() == WebSocketCloseCode(rawValue: 4001))
        #expect(try sameSession.closeCode() == WebSocketCloseCode(rawValue: 4001), "another connection of the revoked session")
        #expect(try ProtocolClient(port: server.port).errorCode("auth", ["token": token]) == "invalid_token")
        // The other session is untouched.
        #expect(try otherSession.ok("ping")["time"] != nil)
        try ProtocolClient.authenticated(otherToken, port: server.port)
    }

    @Test func logoutAllRevokesEverySessionOfTheUser() async throws {
        let server = try await startHuddle()
        let (client, first) = try ProtocolClient.signedUp("alice", port: server.port)
        let phone = try ProtocolClient(port: server.port)
        let second = try phone.login("alice")
        let tablet = try ProtocolClient(port: server.port)
        let third = try tablet.login("alice")
        let bob = try ProtocolClient(port: server.port)
        let bobToken = try bob.signup("bob")
        let result = try client.ok("logout", ["all": true])
        #expect(JSON.int(result["revoked"]) == 3)
        for (connection, label) in [(client, "this"), (phone, "phone"), (tablet, "tablet")] {
            #expect(try connection.closeCode() == WebSocketCloseCode(rawValue: 4001), "\(label)")
        }
        for token in [first, second, third] {
            #expect(try ProtocolClient(port: server.port).errorCode("auth", ["token": token]) == "invalid_token")
        }
        #expect(try bob.ok("ping")["time"] != nil, "another user's connection stays open")
        try ProtocolClient.authenticated(bobToken, port: server.port)
    }

    @Test func logoutWithAllFalseRevokesOnlyThisSession() async throws {
        let server = try await startHuddle()
        let (client, _) = try ProtocolClient.signedUp("alice", port: server.port)
        let phone = try ProtocolClient(port: server.port)
        try phone.login("alice")
        #expect(JSON.int(try client.ok("logout", ["all": false])["revoked"]) == 1)
        #expect(try client.closeCode() == WebSocketCloseCode(rawValue: 4001))
        #expect(try phone.ok("whoami")["user"] != nil)
    }

    @Test(arguments: ["header", "subprotocol"])
    func tokenOnTheUpgradeRequestOpensTheSession(way: String) async throws {
        let server = try await startHuddle()
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let credential: ProtocolClient.Credential = way == "header" ? .header(token) : .subprotocol(token)
        let opened = JSON.nowMilliseconds
        let client = try ProtocolClient(port: server.port, credential: credential)
        #expect(client.subprotocol == "huddle.v1", "the token must never be echoed")
        let session = try client.nextEvent("session")
        let heard = JSON.nowMilliseconds
        #expect((session["user"] as? JSONObject)?["username"] as? String == "alice")
        #expect((session["user"] as? JSONObject)?["email"] as? String == "alice@example.com")
        #expect(JSON.int(session["expires_at"]) != nil)
        #expect((opened...heard).contains(JSON.int(session["time"]) ?? 0), "the session event's time is when it was made")
        #expect((try client.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "alice")
        #expect(try client.errorCode("auth", ["token": token]) == "already_authenticated")
        #expect(try client.eventIfAny(within: 0.2) == nil, "the session event is sent once")
    }

    /// "With 1 or 2, the server authenticates before processing any request": requests sent
    /// right after the upgrade are answered only after the session event (or never, with a bad
    /// token: auth_failed and 4001 come first).
    @Test(arguments: [true, false])
    func upgradeTokenIsCheckedBeforeAnyRequest(good: Bool) async throws {
        let server = try await startHuddle()
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let client = try ProtocolClient(port: server.port, credential: .header(good ? token : String(repeating: "C", count: 43)))
        _ = try client.sendBatch([("ping", [:]), ("whoami", [:])])
        var seen: [String] = []  // "event:KIND" or "reply:ID:ok|error"
        var closeCode: WebSocketCloseCode? = nil
        while good ? seen.count < 3 : closeCode == nil {
            do {
                let message = try client.readMessage()
                if let event = message["event"] as? String {
                    seen.append("event:\(event)")
                } else {
                    seen.append("reply:\(message["id"] as? String ?? "null"):\(JSON.bool(message["ok"]) == true ? "ok" : "error")")
                }
            } catch let closed as ProtocolClient.Closed {
                closeCode = closed.code
            }
        }
        if good {
            #expect(seen == ["event:session", "reply:1:ok", "reply:2:ok"])
        } else {
            #expect(seen == ["event:auth_failed"], "nothing is processed for a refused token")
            #expect(closeCode == WebSocketCloseCode(rawValue: 4001))
        }
    }

    @Test func headerTokenWorksWithoutOfferingASubprotocol() async throws {
        let server = try await startHuddle()
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let client = try ProtocolClient(port: server.port, credential: .header(token), subprotocols: nil)
        #expect(try client.nextEvent("session")["user"] != nil)
    }

    @Test(arguments: ["header", "subprotocol"])
    func badTokenOnTheUpgradeRequestIsAuthFailedAnd4001(way: String) async throws {
        let server = try await startHuddle()
        try ProtocolClient.signedUp("alice", port: server.port)
        let token = String(repeating: "B", count: 43)
        let credential: ProtocolClient.Credential = way == "header" ? .header(token) : .subprotocol(token)
        let client = try ProtocolClient(port: server.port, credential: credential)
        let failed = try client.nextEvent("auth_failed")
        let error = try #require(failed["error"] as? JSONObject)
        #expect(error["code"] as? String == "invalid_token")
        #expect(error["message"] is String)
        #expect(JSON.int(failed["time"]) != nil)
        #expect(try client.closeCode() == WebSocketCloseCode(rawValue: 4001))
    }

    @Test func revokedTokenOnTheUpgradeRequestIsAuthFailed() async throws {
        let server = try await startHuddle()
        let (client, token) = try ProtocolClient.signedUp("alice", port: server.port)
        try client.ok("logout")
        let late = try ProtocolClient(port: server.port, credential: .header(token))
        #expect((try late.nextEvent("auth_failed")["error"] as? JSONObject)?["code"] as? String == "invalid_token")
        #expect(try late.closeCode() == WebSocketCloseCode(rawValue: 4001))
    }

    @Test func alreadyAuthenticated() async throws {
        let server = try await startHuddle()
        let (client, token) = try ProtocolClient.signedUp("alice", port: server.port)
        #expect(try client.errorCode("signup", ["username": "bob", "email": "bob@example.com", "password": ProtocolClient.password]) == "already_authenticated")
        #expect(try client.errorCode("login", ["login": "alice", "password": ProtocolClient.password]) == "already_authenticated")
        #expect(try client.errorCode("auth", ["token": token]) == "already_authenticated")
        // The refused signup created nobody: bob is still free.
        try ProtocolClient(port: server.port).signup("bob")
    }

    @Test(arguments: [
        ("whoami", [:]), ("logout", [:]), ("logout", ["all": true]),
        ("subscribe", ["channel": "room:lobby"]), ("unsubscribe", ["channel": "room:lobby"]),
        ("publish", ["channel": "room:lobby", "data": "hi"]), ("history", ["channel": "room:lobby"]),
        ("presence", ["channel": "room:lobby"]),
    ] as [(String, [String: any Sendable])])
    func opsBeforeAuthAreNotAuthenticated(op: String, fields: [String: any Sendable]) async throws {
        let server = try await startHuddle()
        let client = try ProtocolClient(port: server.port)
        #expect(try client.errorCode(op, fields.mapValues { $0 as Any }) == "not_authenticated", "\(op)")
        #expect(try client.ok("ping")["time"] != nil, "the connection stays usable")
    }

    @Test func failedAuthLeavesTheConnectionAnonymousAndUsable() async throws {
        let server = try await startHuddle()
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let client = try ProtocolClient(port: server.port)
        #expect(try client.errorCode("auth", ["token": "wrong"]) == "invalid_token")
        try client.auth(token)
        #expect((try client.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "alice")
    }
}
