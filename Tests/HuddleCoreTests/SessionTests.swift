import HuddleCore
import HuddleProtocol
import Testing

@Suite struct SessionTests {
    let alice = UserInfo(username: "alice", email: "alice@example.com")

    @Test func authOpAcceptsAValidToken() {
        let harness = CoreHarness()
        let (_, session) = harness.signUp("alice")
        let connection = harness.connect()
        let step = harness.handle(.authenticate(connection, requestID: "a", tokenHash: session.tokenHash))
        #expect(step.commands.isEmpty)
        #expect(step.outputs == [.reply(connection, requestID: "a", .account(user: alice, expiresAt: session.expiresAt, isNewSession: false))])
        #expect(harness.handle(.authenticate(connection, requestID: "b", tokenHash: session.tokenHash)).errorCode == .alreadyAuthenticated)
    }

    @Test func headerTokenIsAcceptedWithASessionOutput() {
        let harness = CoreHarness()
        let (_, session) = harness.signUp("alice")
        let connection = harness.connect()
        let step = harness.handle(.authenticate(connection, requestID: nil, tokenHash: session.tokenHash))
        #expect(step.outputs == [.sessionAccepted(connection, user: alice, expiresAt: session.expiresAt)])
        #expect(harness.handle(.whoami(connection, requestID: "w")).errorCode == nil)
    }

    @Test func unknownTokenIsInvalid() {
        let harness = CoreHarness()
        let connection = harness.connect()
        #expect(harness.handle(.authenticate(connection, requestID: "a", tokenHash: [1, 2, 3])).errorCode == .invalidToken)
        // Refused by the op, the connection stays open and may try again.
        #expect(harness.core.connectionCount == 1)
    }

    @Test func refusedHeaderTokenFailsAndForgetsTheConnection() {
        let harness = CoreHarness()
        let connection = harness.connect()
        let step = harness.handle(.authenticate(connection, requestID: nil, tokenHash: [1, 2, 3]))
        guard case let .authFailed(refused, error)? = step.outputs.first else {
            Issue.record("expected authFailed, got \(step.outputs)")
            return
        }
        #expect(refused == connection && error.code == .invalidToken && step.outputs.count == 1)
        #expect(harness.core.connectionCount == 0)
        #expect(harness.handle(.connectionClosed(connection)) == CoreStep())
    }

    @Test func expiryIsCheckedWithTheRequestTime() {
        let harness = CoreHarness()
        let session = harness.newSession(lifetime: 1_000)
        harness.handle(CoreHarness.signUpRequest(harness.connect(), "alice", session: session))
        harness.advance(999)
        #expect(harness.handle(.authenticate(harness.connect(), requestID: "a", tokenHash: session.tokenHash)).errorCode == nil)
        harness.advance(1)
        #expect(harness.handle(.authenticate(harness.connect(), requestID: "a", tokenHash: session.tokenHash)).errorCode == .tokenExpired)
        let header = harness.handle(.authenticate(harness.connect(), requestID: nil, tokenHash: session.tokenHash))
        #expect(header.outputs.count == 1)
        if case let .authFailed(_, error)? = header.outputs.first { #expect(error.code == .tokenExpired) } else { Issue.record("\(header)") }
    }

    /// Expired sessions answer token_expired for a week, then a tick purges them by a command.
    @Test func expiredSessionsArePurgedAWeekLater() {
        var configuration = CoreConfiguration()
        configuration.expiredSessionRetentionMilliseconds = 7 * CoreHarness.day
        let harness = CoreHarness(configuration: configuration)
        let short = harness.newSession(lifetime: CoreHarness.day)
        let (connection, long) = harness.signUp("alice")
        _ = connection
        harness.handle(CoreHarness.signUpRequest(harness.connect(), "bob", session: short))
        harness.advance(8 * CoreHarness.day - 1)
        #expect(harness.handle(.tick).commands.isEmpty)
        #expect(harness.handle(.authenticate(harness.connect(), requestID: "a", tokenHash: short.tokenHash)).errorCode == .tokenExpired)
        harness.advance(1)
        let tick = harness.handle(.tick)
        #expect(tick.commands == [.purgeExpiredSessions(tokenHashes: [short.tokenHash], time: harness.time)])
        #expect(tick.outputs.isEmpty)
        #expect(harness.handle(.authenticate(harness.connect(), requestID: "a", tokenHash: short.tokenHash)).errorCode == .invalidToken)
        #expect(harness.core.durableState.sessions[long.tokenHash] != nil)
        #expect(harness.handle(.tick).commands.isEmpty)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func revokedSessionsAreNotPurgedAgain() {
        let harness = CoreHarness()
        let session = harness.newSession(lifetime: 1)
        let connection = harness.connect()
        harness.handle(CoreHarness.signUpRequest(connection, "alice", session: session))
        harness.handle(.logout(connection, requestID: "o", all: false))
        harness.advance(CoreHarness.day * 8)
        #expect(harness.handle(.tick).commands.isEmpty)
    }

    @Test func logoutRevokesThisSessionAndClosesItsConnections() {
        let harness = CoreHarness()
        let (phone, phoneSession) = harness.signUp("alice")
        let phoneAgain = harness.connectSignedIn(with: phoneSession, loop: 1)
        let laptopSession = harness.newSession()
        let laptop = harness.connect()
        harness.handle(.beginLogin(laptop, requestID: "L", login: "alice", address: "a", password: "p"))
        harness.handle(.finishLogin(laptop, requestID: "L", username: "alice", passwordMatched: true, address: "a", session: laptopSession))

        let step = harness.handle(.logout(phone, requestID: "o", all: false))
        #expect(step.commands == [.revokeSessions(username: "alice", tokenHashes: [phoneSession.tokenHash], time: harness.time)])
        #expect(step.outputs == [
            .reply(phone, requestID: "o", .revoked(count: 1)),
            .closeConnections([phone, phoneAgain].sorted(), code: 4001, reason: "logged out"),
        ])
        #expect(harness.core.durableState.sessions[phoneSession.tokenHash] == nil)
        #expect(harness.core.durableState.sessions[laptopSession.tokenHash] != nil)
        // The closed connections are forgotten at once: nothing more is done for them.
        #expect(harness.handle(.whoami(phone, requestID: "w")) == CoreStep())
        #expect(harness.handle(.whoami(laptop, requestID: "w")).errorCode == nil)
        #expect(harness.handle(.authenticate(harness.connect(), requestID: "a", tokenHash: phoneSession.tokenHash)).errorCode == .invalidToken)
    }

    @Test func logoutAllRevokesEverySessionOfTheUserOnly() {
        let harness = CoreHarness()
        let (phone, phoneSession) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let tabletSession = harness.newSession()
        harness.handle(.connectionClosed(harness.connectSignedIn(with: phoneSession)))
        let tablet = harness.connect(loop: 2)
        harness.handle(.beginLogin(tablet, requestID: "L", login: "alice", address: "a", password: "p"))
        harness.handle(.finishLogin(tablet, requestID: "L", username: "alice", passwordMatched: true, address: "a", session: tabletSession))

        let step = harness.handle(.logout(tablet, requestID: "o", all: true))
        let revoked = [phoneSession.tokenHash, tabletSession.tokenHash].sorted { $0.lexicographicallyPrecedes($1) }
        #expect(step.commands == [.revokeSessions(username: "alice", tokenHashes: revoked, time: harness.time)])
        #expect(step.outputs == [
            .reply(tablet, requestID: "o", .revoked(count: 2)),
            .closeConnections([phone, tablet], code: 4001, reason: "logged out"),
        ])
        #expect(harness.core.durableState.sessions.tokenHashes(of: "alice").isEmpty)
        #expect(harness.handle(.whoami(bob, requestID: "w")).errorCode == nil)
    }

    @Test func disconnectUserClosesConnectionsButKeepsSessions() {
        let harness = CoreHarness()
        let (first, session) = harness.signUp("alice")
        let second = harness.connectSignedIn(with: session, loop: 1)
        let step = harness.handle(.disconnectUser(requestID: "d", username: "Alice"))
        #expect(step.commands.isEmpty)
        #expect(step.outputs == [
            .closeConnections([first, second], code: 4001, reason: "disconnected by the server"),
            .reply(nil, requestID: "d", .disconnected(count: 2)),
        ])
        #expect(harness.core.connectionCount == 0)
        #expect(harness.handle(.disconnectUser(requestID: "d", username: "alice")).replies == [.disconnected(count: 0)])
        #expect(harness.handle(.disconnectUser(requestID: "d", username: "zed")).errorCode == .badRequest)
        #expect(harness.handle(.disconnectUser(requestID: "d", username: "no way")).errorCode == .badRequest)
        #expect(harness.handle(.authenticate(harness.connect(), requestID: "a", tokenHash: session.tokenHash)).errorCode == nil)
    }
}
