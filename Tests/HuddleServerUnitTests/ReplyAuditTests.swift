import HuddleCore
import HuddleProtocol
@testable import HuddleServer
import Testing

// The audit keeps nothing in release builds.
#if DEBUG

/// The debug build's check that every request gets exactly one answer (`ReplyAudit`), on the
/// paths the core runner answers: replies, HTTP API responses, photo decisions, sign-ins.
@Suite struct ReplyAuditTests {
    static let alice = ConnectionRef(loop: 0, serial: 1)

    static func request(_ id: String, _ operation: Operation = .whoami, on ref: ConnectionRef = alice) -> CoreRequest {
        CoreRequest(ClientRequest(id: id, operation: operation), on: ref)
    }

    @Test func oneAnswerPerRequestPasses() {
        var audit = ReplyAudit()
        let request = Self.request("1")
        audit.expect(request)
        let result1 = audit.answered(request.replyRoute)
        #expect(result1)
        let result2 = audit.checkAnswered(request, CoreStep(), connectionKnown: true)
        #expect(result2)
    }

    @Test func aSecondAnswerIsCaught() {
        var audit = ReplyAudit()
        let request = Self.request("1")
        audit.expect(request)
        let result3 = audit.answered(request.replyRoute)
        #expect(result3)
        let result4 = audit.answered(request.replyRoute)
        #expect(!result4)
    }

    @Test func aMissingAnswerIsCaught() {
        var audit = ReplyAudit()
        let write = Self.request("w", .markRead(channel: "chat:alice:bob", offset: 1))
        audit.expect(write)
        let result5 = audit.checkAnswered(write, CoreStep(), connectionKnown: true)
        #expect(!result5)
    }

    @Test func aRequestOnAConnectionTheCoreForgotOwesNothing() {
        var audit = ReplyAudit()
        let request = Self.request("1")
        audit.expect(request)
        let result6 = audit.checkAnswered(request, CoreStep(), connectionKnown: false)
        #expect(result6)
        let result7 = audit.answered(request.replyRoute)
        #expect(!result7)
    }

    @Test func aSignInIsAnsweredByItsSecondHalf() {
        var audit = ReplyAudit()
        let begin = CoreRequest(connection: Self.alice, requestID: "s", .beginSignUp(username: "alice", email: "a@example.com", password: "pw", address: "a"))
        audit.expect(begin)
        var step = CoreStep()
        step.outputs.append(.hashNewPassword(Self.alice, requestID: "s", username: "alice", email: "a@example.com", password: "pw", address: "a"))
        let result8 = audit.checkAnswered(begin, step, connectionKnown: true)
        #expect(result8)
        let credentials = Credentials(salt: [1], hash: [2], iterations: 1)
        let session = NewSession(tokenHash: [3], expiresAt: 4, device: nil)
        let finish = CoreRequest(
            connection: Self.alice, requestID: "s",
            .signUp(username: "alice", email: "a@example.com", passwordLength: 2, passwordEqualsUsername: false, address: "a", credentials: credentials, session: session))
        audit.expect(finish)  // continues the first half's wait
        let result9 = audit.answered(finish.replyRoute)
        #expect(result9)
        let result10 = audit.checkAnswered(finish, CoreStep(), connectionKnown: true)
        #expect(result10)
        let result11 = audit.answered(finish.replyRoute)
        #expect(!result11)
    }

    @Test func apiPhotoAndUpgradeAnswersAreCountedToo() {
        var audit = ReplyAudit()
        let api = CoreRequest(requestID: "api-1", .serverPublish(channel: "room:a", type: "t", data: "{}"))
        let photo = CoreRequest(.authorizePhotoRead(caller: ConnectionRef(loop: 1, serial: 9), tokenHash: [1], hash: "ab"))
        let upgrade = CoreRequest(connection: Self.alice, .authenticate(tokenHash: [1]))
        for request in [api, photo, upgrade] { audit.expect(request) }
        #expect(api.replyRoute == .api(requestID: "api-1"))
        #expect(photo.replyRoute == .photo(caller: ConnectionRef(loop: 1, serial: 9)))
        #expect(upgrade.replyRoute == .signInEvent(Self.alice))
        for request in [api, photo, upgrade] { let result = audit.answered(request.replyRoute); #expect(result) }
        let result13 = audit.answered(api.replyRoute)
        #expect(!result13)
    }

    @Test func theServersOwnRequestsOweNothing() {
        var audit = ReplyAudit()
        audit.expect(.tick)
        audit.expect(.expireActivities)
        #expect(CoreRequest.tick.replyRoute == .none)
        let result14 = audit.checkAnswered(.expireActivities, CoreStep(), connectionKnown: true)
        #expect(result14)
    }

    @Test func aClosedConnectionsWaitsAreForgotten() {
        var audit = ReplyAudit()
        let request = Self.request("1")
        audit.expect(request)
        audit.forget(Self.alice)
        let result15 = audit.answered(request.replyRoute)
        #expect(!result15)
    }
}

#endif
