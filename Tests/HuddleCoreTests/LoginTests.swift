import HuddleCore
import HuddleProtocol
import Testing

@Suite struct LoginTests {
    /// Signs alice up on a connection that is then closed, leaving the account.
    private func harnessWithAlice(configuration: CoreConfiguration = .init()) -> CoreHarness {
        let harness = CoreHarness(configuration: configuration)
        let (connection, _) = harness.signUp("alice")
        harness.handle(.connectionClosed(connection))
        return harness
    }

    @Test(arguments: ["alice", "ALICE", "alice@example.com", "Alice@EXAMPLE.com"])
    func knownLoginAsksTheServerToVerifyThePassword(login: String) {
        let harness = harnessWithAlice()
        let connection = harness.connect(address: "198.51.100.7")
        let step = harness.handle(.beginLogin(connection, requestID: "L", login: login, address: "198.51.100.7", password: "hunter22"))
        #expect(step.commands.isEmpty)
        #expect(step.outputs == [.verifyPassword(
            connection, requestID: "L", username: "alice", credentials: CoreHarness.credentials,
            password: "hunter22", address: "198.51.100.7"
        )])
    }

    @Test func matchingPasswordOpensASession() {
        let harness = harnessWithAlice()
        let connection = harness.connect()
        harness.handle(.beginLogin(connection, requestID: "L", login: "alice", address: "a", password: "p"))
        let session = harness.newSession()
        let step = harness.handle(.finishLogin(connection, requestID: "L", username: "alice", passwordMatched: true, address: "a", session: session))
        #expect(step.commands == [.openSession(username: "alice", session: session, time: harness.time)])
        let user = UserInfo(username: "alice", email: "alice@example.com")
        #expect(step.replies == [.account(user: user, expiresAt: session.expiresAt, isNewSession: true)])
        #expect(harness.handle(.whoami(connection, requestID: "w")).errorCode == nil)
        #expect(harness.core.durableState.sessions.count == 2)
    }

    @Test func wrongPasswordAndUnknownLoginAreTheSameError() {
        let harness = harnessWithAlice()
        let connection = harness.connect()
        harness.handle(.beginLogin(connection, requestID: "L", login: "alice", address: "a", password: "p"))
        let wrong = harness.handle(.finishLogin(
            connection, requestID: "L", username: "alice", passwordMatched: false, address: "a", session: harness.newSession()
        ))
        // An unknown login is verified too (against nothing), and answered only then.
        let began = harness.handle(.beginLogin(connection, requestID: "M", login: "nobody", address: "a", password: "p"))
        #expect(began.outputs == [.verifyPassword(connection, requestID: "M", username: nil, credentials: nil, password: "p", address: "a")])
        let unknown = harness.handle(.finishLogin(
            connection, requestID: "M", username: nil, passwordMatched: false, address: "a", session: harness.newSession()
        ))
        #expect(wrong.error == unknown.error)
        #expect(wrong.errorCode == .invalidCredentials)
        #expect(wrong.commands.isEmpty && unknown.commands.isEmpty)
        #expect(harness.handle(.whoami(connection, requestID: "w")).errorCode == .notAuthenticated)
    }

    @Test func loginIsDroppedWhenTheConnectionClosedDuringVerification() {
        let harness = harnessWithAlice()
        let connection = harness.connect()
        harness.handle(.beginLogin(connection, requestID: "L", login: "alice", address: "a", password: "p"))
        harness.handle(.connectionClosed(connection))
        let step = harness.handle(.finishLogin(
            connection, requestID: "L", username: "alice", passwordMatched: true, address: "a", session: harness.newSession()
        ))
        #expect(step == CoreStep())
        #expect(harness.core.durableState.sessions.count == 1)
    }

    @Test func finishLoginWithoutABeginIsIgnored() {
        let harness = harnessWithAlice()
        let connection = harness.connect()
        let step = harness.handle(.finishLogin(
            connection, requestID: "L", username: "alice", passwordMatched: true, address: "a", session: harness.newSession()
        ))
        #expect(step == CoreStep())
    }

    @Test func signedInConnectionsCannotLogInAgain() {
        let harness = harnessWithAlice()
        let (bob, _) = harness.signUp("bob")
        #expect(harness.handle(.beginLogin(bob, requestID: "L", login: "alice", address: "a", password: "p")).errorCode == .alreadyAuthenticated)
    }

    @Test func twoRacingLoginsOnOneConnectionOpenOneSession() {
        let harness = harnessWithAlice()
        let connection = harness.connect()
        harness.handle(.beginLogin(connection, requestID: "1", login: "alice", address: "a", password: "p"))
        harness.handle(.beginLogin(connection, requestID: "2", login: "alice", address: "a", password: "p"))
        let first = harness.handle(.finishLogin(connection, requestID: "1", username: "alice", passwordMatched: true, address: "a", session: harness.newSession()))
        let second = harness.handle(.finishLogin(connection, requestID: "2", username: "alice", passwordMatched: true, address: "a", session: harness.newSession()))
        #expect(first.commands.count == 1)
        #expect(second.commands.isEmpty)
        #expect(second.errorCode == .alreadyAuthenticated)
    }
}
