import HuddleCore
import HuddleProtocol
import Testing

@Suite struct SignUpTests {
    @Test func signUpCreatesTheAccountSignsInAndLogsOneCommand() {
        let harness = CoreHarness()
        let connection = harness.connect()
        let session = harness.newSession(device: "alice's phone")
        let step = harness.handle(CoreHarness.signUpRequest(connection, "Alice", email: "Alice@Example.COM", session: session))
        #expect(step.commands == [.signUp(
            username: "alice", email: "alice@example.com", credentials: CoreHarness.credentials,
            session: session, time: harness.time
        )])
        let user = UserInfo(username: "alice", email: "alice@example.com")
        #expect(step.outputs == [.reply(connection, requestID: "signup", .account(user: user, expiresAt: session.expiresAt, isNewSession: true))])
        #expect(harness.core.durableState.accounts["alice"]?.info == user)
        #expect(harness.core.durableState.sessions[session.tokenHash]?.device == "alice's phone")
        #expect(harness.core.isOnline("alice"))
        let whoami = harness.handle(.whoami(connection, requestID: "w"))
        #expect(whoami.replies == [.account(user: user, expiresAt: session.expiresAt, isNewSession: false)])
    }

    @Test(arguments: [
        ("ab", false), ("abc", true), (String(repeating: "a", count: 32), true), (String(repeating: "a", count: 33), false),
        ("a_1", true), ("1abc", false), ("_abc", false), ("al ice", false), ("al-ice", false), ("ALICE_9", true),
        ("ålice", false), ("\u{212A}im", false), ("", false),
    ])
    func usernameRules(username: String, valid: Bool) {
        let harness = CoreHarness()
        let step = harness.handle(CoreHarness.signUpRequest(harness.connect(), username, email: "x@example.com", session: harness.newSession()))
        #expect((step.errorCode == nil) == valid)
        if !valid { #expect(step.errorCode == .invalidUsername) }
    }

    @Test(arguments: [
        ("a@b.co", true), ("First.Last+tag@mail.example.org", true), ("a@b", false), ("@b.co", false), ("a@", false),
        ("a@@b.co", false), ("a@b@c.co", false), ("a@b..co", false), ("a@.b.co", false), ("a@b.co.", false),
        ("a b@c.co", false), ("a@b.co\n", false), ("", false),
        (String(repeating: "a", count: 245) + "@ex.co.uk", true), (String(repeating: "a", count: 246) + "@ex.co.uk", false),
    ])
    func emailRules(email: String, valid: Bool) {
        let harness = CoreHarness()
        let step = harness.handle(CoreHarness.signUpRequest(harness.connect(), "alice", email: email, session: harness.newSession()))
        #expect((step.errorCode == nil) == valid)
        if !valid { #expect(step.errorCode == .invalidEmail) }
    }

    @Test(arguments: [(7, false, false), (8, false, true), (128, false, true), (129, false, false), (12, true, false)])
    func passwordRules(length: Int, equalsUsername: Bool, valid: Bool) {
        let harness = CoreHarness()
        let request = CoreHarness.signUpRequest(
            harness.connect(), "alice", passwordLength: length, passwordEqualsUsername: equalsUsername, session: harness.newSession()
        )
        let step = harness.handle(request)
        #expect(step.errorCode == (valid ? nil : .weakPassword))
    }

    /// protocol.md's order: already_authenticated, invalid_username, invalid_email,
    /// weak_password, username_taken, email_taken.
    @Test func checksComeInTheSpecifiedOrder() {
        let harness = CoreHarness()
        let (signedIn, _) = harness.signUp("alice")
        let fresh = harness.connect()
        func attempt(_ connection: ConnectionRef, _ username: String, _ email: String, _ length: Int) -> CoreErrorCode? {
            harness.handle(CoreHarness.signUpRequest(connection, username, email: email, passwordLength: length, session: harness.newSession())).errorCode
        }
        #expect(attempt(signedIn, "!", "bad", 1) == .alreadyAuthenticated)
        #expect(attempt(fresh, "!", "bad", 1) == .invalidUsername)
        #expect(attempt(fresh, "alice", "bad", 1) == .invalidEmail)
        #expect(attempt(fresh, "alice", "alice@example.com", 1) == .weakPassword)
        #expect(attempt(fresh, "ALICE", "alice@example.com", 10) == .usernameTaken)
        #expect(attempt(fresh, "bob", "ALICE@example.com", 10) == .emailTaken)
        #expect(attempt(fresh, "bob", "bob@example.com", 10) == nil)
        #expect(harness.log.count == 2)
    }

    @Test func requestsFromUnknownConnectionsAreIgnored() {
        let harness = CoreHarness()
        let stranger = ConnectionRef(loop: 3, serial: 99)
        #expect(harness.handle(CoreHarness.signUpRequest(stranger, "alice", session: harness.newSession())) == CoreStep())
        #expect(harness.handle(.whoami(stranger, requestID: "1")) == CoreStep())
        #expect(harness.handle(.subscribe(stranger, requestID: "1", channel: "room:a", since: nil)) == CoreStep())
        #expect(harness.core.durableState.accounts.count == 0)
    }

    @Test func anonymousConnectionsMayNotUseChannelsOrSessionOps() {
        let harness = CoreHarness()
        let connection = harness.connect()
        let requests: [CoreRequest] = [
            .whoami(connection, requestID: "1"), .logout(connection, requestID: "2", all: false),
            .subscribe(connection, requestID: "3", channel: "room:a", since: nil),
            .unsubscribe(connection, requestID: "4", channel: "room:a"),
            .publish(connection, requestID: "5", channel: "room:a", type: "message", data: "1"),
            .history(connection, requestID: "6", channel: "room:a", before: nil, limit: 10),
            .presence(connection, requestID: "7", channel: "room:a"),
        ]
        for request in requests {
            #expect(harness.handle(request).errorCode == .notAuthenticated)
        }
    }
}
