import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import Synchronization
import Testing

/// HuddleClient's outbox (issue 12): every write gets a `client_id`, waits for a connection
/// however long the outage, and is sent again after a drop until answered — so a write whose
/// reply was lost is done once, and a write made while disconnected is done on reconnect.
@Suite(.ownThread) struct ClientOutboxTests {
    /// The outcomes of calls made without awaiting them.
    final class Outcomes<Value: Sendable>: Sendable {
        private let list = Mutex<[Result<Value, HuddleClientError>]>([])
        func append(_ outcome: Result<Value, HuddleClientError>) { list.withLock { $0.append(outcome) } }
        var all: [Result<Value, HuddleClientError>] { list.withLock { $0 } }
    }

    /// Posts by `author` with `text`, read over a direct connection.
    static func posts(_ text: String, reader: V1Client) throws -> [[String: Any]] {
        let posts = try reader.ok("feed", ["limit": 50])["posts"] as? [[String: Any]] ?? []
        return posts.filter { $0["text"] as? String == text }
    }

    @Test func writesWhoseRepliesWereLostAreDoneOnceAfterTheReconnect() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await DurableServer.start(dataDirectory: data)
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let direct = try V1Client(port: server.port)
        let token = try direct.signUp("outbox_a")
        let liked = try direct.ok("post", ["text": "like me"])["post"] as? [String: Any] ?? [:]
        let likedID = UInt64(liked["id"] as? Int ?? 0)

        // No heartbeat drop while the replies are muted (on a loaded machine it could come
        // before the test has seen the writes done): only the test's cut ends the connection.
        let alice = try await ClientHarness(url: proxy.url, credentials: .token(token)) { configuration in
            configuration.heartbeat = Heartbeat(pingAfterMilliseconds: 600_000, deadAfterMilliseconds: 1_200_000)
            configuration.requestTimeoutMilliseconds = 120_000
        }
        try await alice.waitUntilConnected()
        proxy.muteAll()
        let posted = Outcomes<FeedPost>()
        let toggled = Outcomes<PostLike>()
        let commented = Outcomes<PostComment>()
        await alice.run { client in
            client.post(text: "sent once") { posted.append($0) }
            client.like(post: likedID) { toggled.append($0) }
            client.comment(on: likedID, text: "said once") { commented.append($0) }
        }
        // The server did all three; their replies are lost on the muted path.
        try await eventually(timeout: 15, "the writes done on the server") {
            let post = (try? direct.ok("feed", ["limit": 50])["posts"] as? [[String: Any]])?.first { $0["id"] as? Int == Int(likedID) }
            return post?["likes"] as? Int == 1 && post?["comments"] as? Int == 1 && ((try? Self.posts("sent once", reader: direct).count) ?? 0) == 1
        }
        #expect(await alice.run { $0.unansweredWrites } == 3)
        proxy.cutAll(reset: true)

        try await eventually(timeout: 30, "the three answered after the reconnect") {
            posted.all.count == 1 && toggled.all.count == 1 && commented.all.count == 1
        }
        let post = try posted.all[0].get()
        let like = try toggled.all[0].get()
        _ = try commented.all[0].get()
        #expect(post.text == "sent once")
        #expect(like.liked && like.likes == 1, "the toggle is not undone by its retry: \(like)")
        #expect(try Self.posts("sent once", reader: direct).map { $0["id"] as? Int } == [Int(post.id)])
        let after = try direct.ok("feed", ["limit": 50])["posts"] as? [[String: Any]] ?? []
        let target = after.first { $0["id"] as? Int == Int(likedID) } ?? [:]
        #expect(target["likes"] as? Int == 1 && target["comments"] as? Int == 1, "\(target)")
        #expect(await alice.run { $0.unansweredWrites } == 0)
        let metrics = try PrometheusText.fetch(port: server.port)
        #expect(metrics.value("huddle_duplicate_writes_total", ["op": "post"]) == 1)
        #expect(metrics.value("huddle_duplicate_writes_total", ["op": "like"]) == 1)
        alice.shutDown()
        #expect(try await server.stop() == 0)
    }

    @Test func aWriteMadeWhileDisconnectedWaitsPastTheRequestTimeoutAndIsDoneOnReconnect() async throws {
        let server = try await startHuddle()
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let direct = try V1Client(port: server.port)
        let token = try direct.signUp("outbox_b")
        let alice = try await ClientHarness(url: proxy.url, credentials: .token(token)) { configuration in
            configuration.requestTimeoutMilliseconds = 500
        }
        try await alice.waitUntilConnected()
        proxy.setRefusing(true)
        proxy.cutAll(reset: true)
        try await alice.waitFor("the drop") { events in events.contains { if case .reconnecting = $0 { true } else { false } } }

        let posted = Outcomes<FeedPost>()
        let read = Outcomes<FeedPage>()
        await alice.run { client in
            client.post(text: "typed offline") { posted.append($0) }
            client.feed { read.append($0) }
        }
        // The read made at the same time times out: the client's sweep has passed the request
        // timeout, and the write is still waiting in the outbox.
        try await eventually(timeout: 15, "the read to time out") { !read.all.isEmpty }
        if case .failure(.timedOut) = read.all[0] {} else { Issue.record("the read: \(read.all[0])") }
        #expect(posted.all.isEmpty, "\(posted.all)")
        #expect(await alice.run { $0.unansweredWrites } == 1)

        proxy.setRefusing(false)
        try await eventually(timeout: 30, "the write answered after the reconnect") { !posted.all.isEmpty }
        #expect(try posted.all[0].get().text == "typed offline")
        #expect(try Self.posts("typed offline", reader: direct).count == 1)
        alice.shutDown()
    }
}
