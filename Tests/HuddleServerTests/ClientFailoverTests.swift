import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient with several server URLs (issue 14: any node of a cluster serves any client,
/// and a node that dies must not strand its clients): it moves to the next URL when an attempt
/// fails or a connection drops. Two single-node servers share nothing, so what is shown here is
/// the moving and the reconnect logic running on the new node; resume across the nodes of one
/// cluster is the cluster tests' part.
@Suite(.ownThread) struct ClientFailoverTests {
    @Test func backoffOnlyBetweenFullRounds() {
        let policy = ReconnectPolicy(initialDelayMilliseconds: 100, maxDelayMilliseconds: 10_000, jitter: 0)
        #expect((1...7).map { policy.delay(attempt: $0, servers: 3, random: 0.5) } == [100, 0, 0, 200, 0, 0, 400],
                "a drop backs off once, then the other two nodes are tried at once")
        #expect((1...4).map { policy.delay(attempt: $0, servers: 1, random: 0.5) } == (1...4).map { policy.delay(attempt: $0, random: 0.5) },
                "one URL: the backoff as before")
    }

    /// The first URL is a closed port: the client connects to the second.
    @Test func aRefusedFirstURLMovesToTheNext() async throws {
        let server = try await startHuddle()
        let closed = try ClosedPort()
        let urls = [try ClientURL("ws://127.0.0.1:\(closed.port)/v1"), try ClientURL(server.url + "/v1")]
        let client = try await ClientHarness(url: server.url) { $0.urls = urls }
        try await client.waitUntilConnected()
        #expect(await client.run { $0.currentURL } == urls[1])
        #expect(client.count { $0.isReconnecting } == 1, "one refused attempt: \(client.events)")
        guard case .reconnecting(1, _, let reason)? = client.events.first else {
            Issue.record("the refused attempt was not reported first: \(client.events)")
            return
        }
        #expect(reason.lowercased().contains("refused"), "\(reason)")
        _ = try await client.ok("a request on the second node") { $0.ping(completion: $1) }
        client.shutDown()
    }

    /// A node killed (kill -9) under a signed-in client with a subscription: the client moves to
    /// the other node and its reconnect logic runs there — the old token (the dead node's) is
    /// refused, the password opens a session, the subscription is resumed and delivers.
    @Test func aKilledNodeMovesTheClientToTheOther() async throws {
        let first = try await startHuddle()
        let second = try await startHuddle()
        for server in [first, second] { try V1Client(port: server.port).signUp("roamer") }
        let urls = [try ClientURL(first.url + "/v1"), try ClientURL(second.url + "/v1")]
        let client = try await ClientHarness(url: first.url, credentials: .password(login: "roamer", password: "pw-roamer-secret")) {
            $0.urls = urls
        }
        try await client.waitUntilConnected()
        #expect(await client.run { $0.currentURL } == urls[0])
        let room = "room:roaming"
        _ = try await client.ok("subscribe") { $0.subscribe(room, completion: $1) }

        try await first.kill9()
        try await client.waitUntilConnected(times: 2, timeout: 30)
        #expect(await client.run { $0.currentURL } == urls[1])
        #expect(await client.run { $0.subscriptions.map(\.channel) } == [room], "the subscription is kept across the move")
        // The resume went out on the new node: its subscription is there, so a publication on
        // the second node arrives.
        try await client.waitFor("the resume on the second node") { events in
            events.contains { if case .recovered(room, _) = $0 { return true } else { return false } }
        }
        let publisher = try V1Client(port: second.port)
        try publisher.signUp("roaming_pub")
        try publisher.ok("publish", ["channel": room, "data": "after the move"])
        try await client.waitFor("the publication on the second node") { _ in client.publications(on: room).count == 1 }
        #expect(!client.events.contains { $0.stopReason != nil }, "\(client.events)")
        client.shutDown()
        #expect(try await second.stop() == 0)
    }
}
