import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient with several server URLs (issue 14: any node of a cluster serves any client,
/// and a node that dies must not strand its clients): it moves to the next URL when an attempt
/// fails or a connection drops. Two single-node servers share nothing, so with two servers what
/// is shown is the moving and the reconnect logic running on the new node; exact resume across
/// URLs is shown with two addresses of one server (a proxy in front of it standing in for a
/// node that dies); resume across the nodes of one cluster is the cluster tests' part.
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

    /// The URL the client is on dies under traffic (a proxy, refusing from then on, in front of
    /// the server whose own address is the second URL): the client moves to the second URL and
    /// resumes there with no gap and no duplicate.
    @Test func resumeAcrossURLsHasNoGapAndNoDuplicate() async throws {
        let server = try await startHuddle()
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let publisherToken = try V1Client(port: server.port).signUp("moving_pub")
        let subscriberToken = try V1Client(port: server.port).signUp("moving_sub")
        let room = "room:moving"
        let urls = [try ClientURL(proxy.url + "/v1"), try ClientURL(server.url + "/v1")]
        let subscriber = try await ClientHarness(url: proxy.url, credentials: .token(subscriberToken)) { $0.urls = urls }
        let publisher = try await ClientHarness(url: server.url, credentials: .token(publisherToken))
        _ = try await subscriber.ok("subscribe") { $0.subscribe(room, completion: $1) }
        let steady = await SteadyPublisher.start(on: publisher, channel: room, intervalMilliseconds: 5)
        try await subscriber.waitFor("traffic on the first URL", timeout: 30) { _ in subscriber.publications(on: room).count >= 25 }

        proxy.setRefusing(true)
        proxy.cutAll(reset: true)
        try await subscriber.waitUntilConnected(times: 2, timeout: 30)
        #expect(await subscriber.run { $0.currentURL } == urls[1])
        let afterMove = subscriber.publications(on: room).count
        try await subscriber.waitFor("traffic on the second URL", timeout: 30) { _ in subscriber.publications(on: room).count >= afterMove + 25 }
        let total = try await steady.finish()
        // A marker after everything: a duplicate replayed by the resume would arrive before it.
        _ = try ProtocolClient.flood(room, count: 1, token: publisherToken, port: server.port)
        try await subscriber.waitFor("the marker", timeout: 30) { _ in
            subscriber.publications(on: room).contains { $0.offset == UInt64(total + 1) }
        }
        let offsets = subscriber.publications(on: room).map(\.offset)
        #expect(offsets == (1...UInt64(total + 1)).map { $0 }, "no gap, no duplicate, in order")
        #expect(subscriber.events.contains(.recovered(channel: room, recovered: true)))
        subscriber.shutDown()
        publisher.shutDown()
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
