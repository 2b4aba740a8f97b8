import HuddleCore
import HuddleProtocol
import Testing

/// The request envelope crosses machines in cluster mode: what `encoded()` writes reads back
/// as the same request, for a client's op and for every request only the server makes.
@Suite struct CoreRequestEncodingTests {
    static let alice = ConnectionRef(loop: 2, serial: 9_000_000_001)
    static let session = NewSession(tokenHash: [0x00, 0x7f, 0x80, 0xff, 0x10], expiresAt: 1_763_712_000_000, device: "phone")

    static let samples: [CoreRequest] = [
        CoreRequest(ClientRequest(id: "1", operation: .like(post: 7, liked: true), clientID: "k-1"), on: alice),
        CoreRequest(ClientRequest(id: "2", operation: .publish(channel: "room:a", type: "message", data: #"{"a":1}"#), clientID: "p"), on: alice),
        CoreRequest(requestID: "api-3", .operation(.history(channel: "room:a", before: nil, limit: 50))),
        CoreRequest(connection: alice, requestID: "4", .beginSignUp(username: "Alice", email: "a@example.com", password: "pw \"q\"", address: "192.0.2.1")),
        CoreRequest(
            connection: alice, requestID: "4",
            .signUp(
                username: "Alice", email: "a@example.com", passwordLength: 12, passwordEqualsUsername: false, address: "192.0.2.1",
                credentials: Credentials(salt: [1, 2, 3], hash: [0xde, 0xad, 0xbe, 0xef], iterations: 600_000), session: session)),
        CoreRequest(connection: alice, requestID: "5", .beginLogin(login: "alice", address: "192.0.2.1", password: "pw")),
        CoreRequest(connection: alice, requestID: "5", .finishLogin(username: nil, passwordMatched: false, address: "192.0.2.1", session: NewSession(tokenHash: [9], expiresAt: 1))),
        CoreRequest(connection: alice, requestID: "5", .finishLogin(username: "alice", passwordMatched: true, address: "192.0.2.1", session: session)),
        CoreRequest(
            connection: alice, requestID: "5",
            .finishLogin(
                username: "alice", passwordMatched: false, address: "192.0.2.1", session: NewSession(tokenHash: [], expiresAt: 0),
                refusal: CoreError(.tooManyAttempts, "too many", retryAfterMilliseconds: 1_500))),
        CoreRequest(connection: alice, requestID: "6", .authenticate(tokenHash: [0xab, 0xcd])),
        CoreRequest(connection: alice, .authenticate(tokenHash: [0xab, 0xcd])),
        CoreRequest(requestID: "api-7", .serverPublish(channel: "room:a", type: "notice", data: #"{"b":[true,null]}"#)),
        CoreRequest(requestID: "api-8", .disconnectUser(username: "alice")),
        CoreRequest(requestID: "api-9", .moderation(.suspend(username: "Alice", reason: "spam \"x\"", until: 1_763_800_000_000))),
        CoreRequest(requestID: "api-10", .moderation(.suspend(username: "alice", reason: "spam", until: nil))),
        CoreRequest(requestID: "api-11", .moderation(.unsuspend(username: "alice"))),
        CoreRequest(.authorizePhotoUpload(caller: ConnectionRef(loop: 1, serial: 3), tokenHash: [1], size: 1_048_576)),
        CoreRequest(.recordPhoto(caller: ConnectionRef(loop: 1, serial: 3), tokenHash: [1], hash: "ab12", size: 10)),
        CoreRequest(.authorizePhotoRead(caller: ConnectionRef(loop: 1, serial: 4), tokenHash: [], hash: "ab12")),
        CoreRequest(.exportArchive(caller: ConnectionRef(loop: 1, serial: 5), tokenHash: [0xfe, 1])),
        CoreRequest(connection: alice, .connectionOpened(address: "2001:db8::1")),
        CoreRequest(connection: alice, .connectionClosed),
        .tick,
        .expireActivities,
        CoreRequest(.presenceElsewhere(user: "alice", node: "node-2", online: true)),
        CoreRequest(.nodeGone(node: "node-2")),
        CoreRequest(.localTick),
        CoreRequest(connection: alice, requestID: "9", .identityVerified(IdentityProof(
            purpose: .signIn(username: "Alice"),
            identity: VerifiedIdentity(issuer: "https://idp.test", subject: "s-1", email: "a@example.com", proposedUsername: nil, nonce: "n", expiresAt: 5),
            refusal: nil, session: session))),
        CoreRequest(connection: alice, requestID: "9", .identityVerified(IdentityProof(
            purpose: .appAuth, identity: nil, refusal: CoreError(.busy, "busy", retryAfterMilliseconds: 1_000), session: NewSession(tokenHash: [], expiresAt: 0)))),
        CoreRequest(connection: alice, requestID: "9", .identityVerified(IdentityProof(
            purpose: .link, identity: VerifiedIdentity(issuer: "app", subject: "bob", email: nil, proposedUsername: "bob", nonce: nil, expiresAt: .max),
            refusal: nil, session: NewSession(tokenHash: [], expiresAt: 0)))),
    ]

    @Test(arguments: samples) func readingWhatWasWrittenGivesTheRequestBack(_ request: CoreRequest) {
        #expect(CoreRequest(encoded: request.encoded()) == request)
    }

    @Test func aClientsOpTravelsAsItsWireRequest() throws {
        let bytes = CoreRequest(ClientRequest(id: "1", operation: .postDelete(post: 7), clientID: "d"), on: Self.alice).encoded()
        #expect(String(decoding: bytes, as: UTF8.self)
            == #"{"connection":{"loop":2,"serial":9000000001},"request":{"id":"1","op":"post_delete","post":7,"client_id":"d"}}"#)
    }

    @Test func whatEncodedDidNotMakeIsRefused() {
        for text in [#"[]"#, #"{"body":{"kind":"nope"}}"#, #"{"body":{"kind":"authenticate","token_hash":"0g"}}"#,
                     #"{"connection":{"loop":"0","serial":1},"body":{"kind":"tick"}}"#, #"{"request":{"id":"1","op":"nope"}}"#,
                     #"{"body":{"kind":"operation","op":"ping"}}"#] {
            #expect(CoreRequest(encoded: Array(text.utf8)) == nil, "\(text)")
        }
    }
}

extension CoreRequest: CustomTestStringConvertible {
    public var testDescription: String { "\(body)".prefix(40).description }
}
