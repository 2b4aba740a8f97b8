import HuddleCore
import Testing

@Suite struct LoginThrottleTests {
    static let window: Int64 = 15 * 60_000

    private func harnessWithUsers(_ names: [String]) -> CoreHarness {
        let harness = CoreHarness()
        for name in names {
            let (connection, _) = harness.signUp(name)
            harness.handle(.connectionClosed(connection))
        }
        return harness
    }

    /// One full failed attempt: begin, then the server says the password did not match.
    @discardableResult
    private func failLogin(_ harness: CoreHarness, _ login: String, address: String) -> CoreStep {
        let connection = harness.connect(address: address)
        let begin = harness.handle(.beginLogin(connection, requestID: "L", login: login, address: address, password: "x"))
        guard case let .verifyPassword(_, _, username, _, _, _)? = begin.outputs.first else { return begin }
        return harness.handle(.finishLogin(
            connection, requestID: "L", username: username, passwordMatched: false, address: address, session: harness.newSession()
        ))
    }

    private func beginLogin(_ harness: CoreHarness, _ login: String, address: String) -> CoreStep {
        harness.handle(.beginLogin(harness.connect(address: address), requestID: "L", login: login, address: address, password: "x"))
    }

    @Test func fiveFailuresPerAccountAndAddressThenRefusedUntilTheOldestLeavesTheWindow() {
        let harness = harnessWithUsers(["alice"])
        for attempt in 0..<5 {
            // Different spellings: the account is what counts.
            #expect(failLogin(harness, attempt.isMultiple(of: 2) ? "alice" : "alice@example.com", address: "10.0.0.1").errorCode == .invalidCredentials)
            harness.advance(1_000)
        }
        let refused = beginLogin(harness, "ALICE", address: "10.0.0.1")
        #expect(refused.errorCode == .tooManyAttempts)
        // The first failure was 5 s ago.
        #expect(refused.error?.retryAfterMilliseconds == Self.window - 5_000)
        harness.advance(Self.window - 5_000 - 1)
        #expect(beginLogin(harness, "alice", address: "10.0.0.1").errorCode == .tooManyAttempts)
        harness.advance(1)
        #expect(beginLogin(harness, "alice", address: "10.0.0.1").errorCode == nil)
    }

    /// Cluster mode: the server refused the attempt before hashing (the limit shared by the
    /// nodes, or its Redis unreachable). The refusal is the reply, the verification ends, and
    /// no failure is counted against the account here.
    @Test func aLoginTheServerRefusedBeforeHashingIsAnsweredWithoutCountingAFailure() {
        let harness = harnessWithUsers(["alice"])
        for attempt in 0..<6 {
            let connection = harness.connect(address: "10.0.0.1")
            let begin = harness.handle(.beginLogin(connection, requestID: "L", login: "alice", address: "10.0.0.1", password: "x"))
            #expect(begin.errorCode == nil, "attempt \(attempt) reached the password check")
            let refusal = attempt.isMultiple(of: 2)
                ? CoreError(.tooManyAttempts, "too many failed logins; try again later", retryAfterMilliseconds: 42)
                : CoreError(.unavailable, "logins cannot be checked right now; try again later")
            let refused = harness.handle(CoreRequest(
                connection: connection, requestID: "L",
                .finishLogin(username: "alice", passwordMatched: false, address: "10.0.0.1", session: harness.newSession(), refusal: refusal)))
            #expect(refused.error == refusal)
        }
        #expect(failLogin(harness, "alice", address: "10.0.0.1").errorCode == .invalidCredentials, "six refusals counted no failure")
    }

    /// Failures from many addresses do not lock the account (its owner would be locked out by
    /// strangers): they space attempts on it a second apart.
    @Test func failuresFromManyAddressesSlowTheAccountDownWithoutLockingIt() {
        let harness = harnessWithUsers(["alice"])
        for attempt in 0..<5 {
            #expect(failLogin(harness, "alice", address: "10.0.0.\(attempt)").errorCode == .invalidCredentials)
        }
        #expect(beginLogin(harness, "alice", address: "10.9.9.9").errorCode == nil)
        let spaced = beginLogin(harness, "alice", address: "10.9.9.8")
        #expect(spaced.errorCode == .tooManyAttempts)
        #expect(spaced.error?.retryAfterMilliseconds == CoreConfiguration().loginAccountBackoffMilliseconds)
        harness.advance(CoreConfiguration().loginAccountBackoffMilliseconds)
        #expect(beginLogin(harness, "alice", address: "10.9.9.8").errorCode == nil)
    }

    @Test func twentyFailuresPerAddressAcrossAccounts() {
        let names = (0..<5).map { "user\($0)" }
        let harness = harnessWithUsers(names)
        for attempt in 0..<20 {
            // Four per account: under the account limit, so only the address limit can refuse.
            #expect(failLogin(harness, names[attempt % 5], address: "203.0.113.5").errorCode == .invalidCredentials)
        }
        let refused = beginLogin(harness, "user4", address: "203.0.113.5")
        #expect(refused.errorCode == .tooManyAttempts)
        #expect(refused.error?.retryAfterMilliseconds == Self.window)
        #expect(beginLogin(harness, "user4", address: "203.0.113.6").errorCode == nil)
    }

    @Test func unknownLoginsCountForTheAddressAndTheirOwnName() {
        let harness = harnessWithUsers([])
        for _ in 0..<5 {
            #expect(failLogin(harness, "ghost", address: "10.0.0.1").errorCode == .invalidCredentials)
        }
        #expect(beginLogin(harness, "ghost", address: "10.0.0.1").errorCode == .tooManyAttempts)
        // Another unknown login is verified like a known one (against nothing): no answer yet.
        let phantom = beginLogin(harness, "phantom", address: "10.0.0.1")
        #expect(phantom.errorCode == nil)
        guard case let .verifyPassword(_, _, username, credentials, _, _)? = phantom.outputs.first else {
            Issue.record("an unknown login is not hashed: \(phantom.outputs)")
            return
        }
        #expect(username == nil && credentials == nil)
    }

    @Test func successClearsTheAccountsCountButNotTheAddresss() {
        let harness = harnessWithUsers(["alice"])
        for _ in 0..<4 { failLogin(harness, "alice", address: "a") }
        let connection = harness.connect(address: "b")
        harness.handle(.beginLogin(connection, requestID: "L", login: "alice", address: "b", password: "x"))
        #expect(harness.handle(.finishLogin(
            connection, requestID: "L", username: "alice", passwordMatched: true, address: "b", session: harness.newSession()
        )).commands.count == 1)
        for _ in 0..<4 { failLogin(harness, "alice", address: "c") }
        #expect(beginLogin(harness, "alice", address: "c").errorCode == nil)
        // Address "a" had alice's 4 failures; 15 more make 19, the next one 20.
        for index in 0..<15 { failLogin(harness, "nobody\(index)", address: "a") }
        // The 20th is verified (an unknown login too); while it is, it counts.
        #expect(beginLogin(harness, "ghost", address: "a").errorCode == nil)
        #expect(beginLogin(harness, "ghost2", address: "a").errorCode == .tooManyAttempts)
    }

    /// A burst of logins sent before any failure is counted must not test more passwords than
    /// the limit allows.
    @Test func loginsBeingVerifiedCountTowardTheLimit() {
        let harness = harnessWithUsers(["alice"])
        var verifying: [ConnectionRef] = []
        for _ in 0..<5 {
            let connection = harness.connect(address: "a")
            let step = harness.handle(.beginLogin(connection, requestID: "L", login: "alice", address: "a", password: "x"))
            #expect(step.outputs.count == 1)
            verifying.append(connection)
        }
        let sixth = beginLogin(harness, "alice", address: "a")
        #expect(sixth.errorCode == .tooManyAttempts)
        #expect(sixth.error?.retryAfterMilliseconds == CoreConfiguration().loginInFlightRetryMilliseconds)
        // A verification that ends (here: its connection closed) frees its place.
        harness.handle(.connectionClosed(verifying[0]))
        #expect(beginLogin(harness, "alice", address: "a").outputs.count == 1)
    }

    @Test func tickForgetsFailuresThatLeftTheWindow() {
        let harness = harnessWithUsers(["alice"])
        for _ in 0..<5 { failLogin(harness, "alice", address: "a") }
        harness.advance(Self.window)
        harness.handle(.tick)
        #expect(beginLogin(harness, "alice", address: "a").outputs.count == 1)
    }
}
