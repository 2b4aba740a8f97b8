import HuddleProtocol
import Testing

@testable import HuddleCore

/// Sign-in with a verified identity, links, unlinks and spent nonces, decided from the claims
/// alone, and rebuilt the same by a replay and by a snapshot.
@Suite struct IdentityTests {
    static let issuer = "https://issuer.test"

    static func identity(_ subject: String, email: String? = nil, proposed: String? = nil, nonce: String? = nil) -> VerifiedIdentity {
        VerifiedIdentity(issuer: issuer, subject: subject, email: email, proposedUsername: proposed, nonce: nonce, expiresAt: CoreHarness.startTime + 600_000)
    }

    static func request(_ connection: ConnectionRef, _ purpose: IdentityProof.Purpose, _ identity: VerifiedIdentity?, refusal: CoreError? = nil, session: NewSession) -> CoreRequest {
        CoreRequest(connection: connection, requestID: "i", .identityVerified(IdentityProof(purpose: purpose, identity: identity, refusal: refusal, session: session)))
    }

    @Test func aFirstSignInMakesAPasswordlessAccountAndTheNextFindsIt() throws {
        let harness = CoreHarness()
        let first = harness.connect()
        let step = harness.handle(Self.request(first, .signIn(username: nil), Self.identity("s1", email: "Ann@Example.com", proposed: "ann"), session: harness.newSession()))
        guard case .account(let user, _, true) = try #require(step.replies.first) else { Issue.record("\(step.replies)"); return }
        #expect(user == UserInfo(username: "ann", email: "ann@example.com"))
        #expect(harness.core.durableState.accounts["ann"]?.credentials == nil)
        let again = harness.handle(Self.request(harness.connect(), .signIn(username: "other"), Self.identity("s1"), session: harness.newSession()))
        guard case .account(let same, _, _) = try #require(again.replies.first) else { Issue.record("\(again.replies)"); return }
        #expect(same.username == "ann")
        #expect(harness.core.durableState.accounts.count == 1)
    }

    @Test func clashesAndReplayedNoncesAreRefused() {
        let harness = CoreHarness()
        _ = harness.signUp("bob")
        let taken = harness.handle(Self.request(harness.connect(), .signIn(username: "bob"), Self.identity("s2"), session: harness.newSession()))
        #expect(taken.errorCode == .usernameTaken)
        #expect(taken.error?.message.contains("identity_link") == true)
        let email = harness.handle(Self.request(harness.connect(), .signIn(username: "bobby"), Self.identity("s2", email: "bob@example.com"), session: harness.newSession()))
        #expect(email.errorCode == .emailTaken)
        let used = harness.handle(Self.request(harness.connect(), .signIn(username: "carl"), Self.identity("s3", nonce: "n1"), session: harness.newSession()))
        #expect(used.errorCode == nil)
        let replay = harness.handle(Self.request(harness.connect(), .signIn(username: nil), Self.identity("s3", nonce: "n1"), session: harness.newSession()))
        #expect(replay.errorCode == .nonceReused)
        let refused = harness.handle(Self.request(harness.connect(), .appAuth, nil, refusal: CoreError(.wrongAudience, "x"), session: harness.newSession()))
        #expect(refused.errorCode == .wrongAudience)
    }

    @Test func linkUnlinkAndTheLastWayToSignIn() {
        let harness = CoreHarness()
        let (bob, _) = harness.signUp("bob")
        let linked = harness.handle(Self.request(bob, .link, Self.identity("b1"), session: harness.newSession()))
        #expect(linked.replies.first.map { if case .identities(let list) = $0 { list.map(\.subject) } else { [] } } == ["b1"])
        let elsewhere = harness.connect()
        _ = harness.handle(Self.request(elsewhere, .signIn(username: "dan"), Self.identity("d1"), session: harness.newSession()))
        #expect(harness.handle(Self.request(elsewhere, .link, Self.identity("b1"), session: harness.newSession())).errorCode == .identityTaken)
        let unlink = CoreRequest(connection: elsewhere, requestID: "u", .operation(.identityUnlink(issuer: Self.issuer, subject: "d1")))
        #expect(harness.handle(unlink).errorCode == .lastSignInMethod)
        #expect(harness.handle(Self.request(elsewhere, .link, Self.identity("d2"), session: harness.newSession())).errorCode == nil)
        #expect(harness.handle(unlink).errorCode == nil)
        #expect(harness.handle(unlink).errorCode == .identityNotFound)
        // bob has a password: his only identity may go.
        #expect(harness.handle(CoreRequest(connection: bob, requestID: "u", .operation(.identityUnlink(issuer: Self.issuer, subject: "b1")))).errorCode == nil)
    }

    @Test func replayAndSnapshotRebuildTheIdentities() throws {
        let harness = CoreHarness()
        let (bob, _) = harness.signUp("bob")
        _ = harness.handle(Self.request(bob, .link, Self.identity("b1", nonce: "n1"), session: harness.newSession()))
        _ = harness.handle(Self.request(harness.connect(), .appAuth, Self.identity("erin"), session: harness.newSession()))
        let replayed = harness.replayed()
        #expect(replayed.durableState == harness.core.durableState)
        #expect(replayed.durableState.identities.owner(of: IdentityKey(issuer: Self.issuer, subject: "erin")) == "erin")
        let restored = try CoreDurableState(snapshotPayload: harness.core.durableState.snapshotPayload)
        #expect(restored == harness.core.durableState)
        #expect(restored.identities.isSpent(nonce: "n1", issuer: Self.issuer))
        #expect(restored.identities.exported(for: "bob") != .array([]))
        var erased = restored.identities
        erased.erase("bob")
        #expect(erased.owner(of: IdentityKey(issuer: Self.issuer, subject: "b1")) == nil)
    }

    @Test func spentNoncesAreBoundedAndForgottenOnceExpired() {
        var configuration = CoreConfiguration()
        configuration.maxSpentNonces = 2
        let harness = CoreHarness(configuration: configuration)
        for (index, nonce) in ["a", "b"].enumerated() {
            #expect(harness.handle(Self.request(harness.connect(), .signIn(username: "u\(index)x"), Self.identity("n\(index)", nonce: nonce), session: harness.newSession())).errorCode == nil)
        }
        let full = harness.handle(Self.request(harness.connect(), .signIn(username: "u9x"), Self.identity("n9", nonce: "c"), session: harness.newSession()))
        #expect(full.errorCode == .busy)
        harness.advance(600_001)
        #expect(harness.handle(Self.request(harness.connect(), .signIn(username: "u9x"), Self.identity("n9", nonce: "c"), session: harness.newSession())).errorCode == nil)
        #expect(harness.core.durableState.identities.spentNonceCount == 1)
    }

    @Test func oneIdentitysSpentNoncesAreBoundedApartFromTheStore() throws {
        var configuration = CoreConfiguration()
        configuration.maxSpentNoncesPerIdentity = 2
        let harness = CoreHarness(configuration: configuration)
        for nonce in ["a", "b"] {
            #expect(harness.handle(Self.request(harness.connect(), .signIn(username: "eve"), Self.identity("e1", nonce: nonce), session: harness.newSession())).errorCode == nil)
        }
        harness.advance(1000)
        let refused = harness.handle(Self.request(harness.connect(), .signIn(username: "eve"), Self.identity("e1", nonce: "c"), session: harness.newSession()))
        #expect(refused.errorCode == .tooManyAttempts)
        #expect(refused.error?.retryAfterMilliseconds == 599_000, "until eve's oldest token expires")
        #expect(harness.handle(Self.request(harness.connect(), .signIn(username: "fay"), Self.identity("f1", nonce: "d"), session: harness.newSession())).errorCode == nil)
        // The count per identity is rebuilt by a replay and by a snapshot.
        #expect(harness.replayed().durableState == harness.core.durableState)
        let restored = try CoreDurableState(snapshotPayload: harness.core.durableState.snapshotPayload)
        #expect(restored == harness.core.durableState)
        let eve = IdentityKey(issuer: Self.issuer, subject: "e1")
        #expect(restored.identities.spentNonces.refusal(for: eve, at: CoreHarness.startTime, bound: 100, perIdentity: 2) != nil)
        // Once eve's tokens expire her nonces make room for new ones, hers alone.
        harness.advance(600_000)
        #expect(harness.handle(Self.request(harness.connect(), .signIn(username: "eve"), Self.identity("e1", nonce: "c"), session: harness.newSession())).errorCode == nil)
        #expect(harness.core.durableState.identities.spentNonceCount == 2, "eve's two expired nonces went, fay's stays")
    }
}
