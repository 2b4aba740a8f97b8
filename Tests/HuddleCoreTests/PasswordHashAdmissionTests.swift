import HuddleCore
import Testing

/// The bounds on password hashes waiting or running (protocol.md, "Limits"): judged before a
/// hash is asked for, and released only when its result comes back, connection or not.
@Suite struct PasswordHashAdmissionTests {
    private static func configuration() -> CoreConfiguration {
        var configuration = CoreConfiguration()
        configuration.signUpsHashingPerAddress = 2
        configuration.signUpsHashing = 3
        configuration.loginsHashing = 2
        return configuration
    }

    private func beginSignUp(_ harness: CoreHarness, _ name: String, address: String) -> (ConnectionRef, CoreStep) {
        let connection = harness.connect(address: address)
        let step = harness.handle(.beginSignUp(
            connection, requestID: "S", username: name, email: "\(name)@example.com", password: "correct horse", address: address))
        return (connection, step)
    }

    private func finishSignUp(_ harness: CoreHarness, _ connection: ConnectionRef, _ name: String, address: String) -> CoreStep {
        harness.handle(.signUp(
            connection, requestID: "S", username: name, email: "\(name)@example.com", passwordLength: 13, passwordEqualsUsername: false,
            address: address, credentials: CoreHarness.credentials, session: harness.newSession()))
    }

    @Test func signupsAreBoundedPerAddressAndOverall() {
        let harness = CoreHarness(configuration: Self.configuration())
        let (first, began) = beginSignUp(harness, "first", address: "a")
        #expect(began.outputs == [.hashNewPassword(first, requestID: "S", username: "first", email: "first@example.com", password: "correct horse", address: "a")])
        _ = beginSignUp(harness, "second", address: "a")
        let perAddress = beginSignUp(harness, "third", address: "a").1
        #expect(perAddress.errorCode == .tooManyAttempts)
        #expect(perAddress.error?.retryAfterMilliseconds == CoreConfiguration().hashingRetryMilliseconds)
        #expect(beginSignUp(harness, "fourth", address: "b").1.errorCode == nil)
        let overall = beginSignUp(harness, "fifth", address: "c").1
        #expect(overall.errorCode == .busy)
        #expect(overall.error?.retryAfterMilliseconds == CoreConfiguration().hashingRetryMilliseconds)
        // A closed connection does not free its place: the hash runs anyway. Its result does.
        harness.handle(.connectionClosed(first))
        #expect(beginSignUp(harness, "fifth", address: "c").1.errorCode == .busy)
        #expect(finishSignUp(harness, first, "first", address: "a").commands.isEmpty, "no account for a closed connection")
        #expect(beginSignUp(harness, "fifth", address: "c").1.errorCode == nil)
        #expect(beginSignUp(harness, "third", address: "a").1.errorCode == .busy, "the address has a place again, the server none")
    }

    @Test func aRefusedSignupAsksForNoHash() {
        let harness = CoreHarness(configuration: Self.configuration())
        harness.signUp("alice")
        for (name, email, password) in [("alice", "new@example.com", "correct horse"), ("bob", "alice@example.com", "correct horse"),
                                        ("1bob", "bob@example.com", "correct horse"), ("bob", "bob", "correct horse"), ("bob", "bob@example.com", "short")] {
            let connection = harness.connect()
            let step = harness.handle(.beginSignUp(connection, requestID: "S", username: name, email: email, password: password, address: "a"))
            #expect(step.errorCode != nil && step.outputs.count == 1, "\(name) \(email): \(step.outputs)")
        }
    }

    @Test func loginsAreBoundedOverall() {
        let harness = CoreHarness(configuration: Self.configuration())
        harness.signUp("alice")
        var verifying: [ConnectionRef] = []
        for address in ["a", "b"] {
            let connection = harness.connect(address: address)
            #expect(harness.handle(.beginLogin(connection, requestID: "L", login: "alice", address: address, password: "p")).errorCode == nil)
            verifying.append(connection)
        }
        let refused = harness.handle(.beginLogin(harness.connect(address: "c"), requestID: "L", login: "nobody", address: "c", password: "p"))
        #expect(refused.errorCode == .busy)
        harness.handle(.finishLogin(verifying[0], requestID: "L", username: "alice", passwordMatched: false, address: "a", session: harness.newSession()))
        #expect(harness.handle(.beginLogin(harness.connect(address: "c"), requestID: "L", login: "nobody", address: "c", password: "p")).errorCode == nil)
    }
}
