import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Deletion and retention", over real sockets against the real binary: a user
/// deletes their account with their password (refused without it or with a wrong one), or the
/// operator deletes it; afterwards, and after a graceful restart or a kill -9, no op, history
/// page, search or photo URL finds anything of theirs, friends were told, the photos only they
/// owned are gone from disk, and the username is quarantined.
@Suite(.ownThread) struct ProtocolAccountDeletionTests {
    static let key = "test-api-key-0123456789"
    static let chat = "chat:alice~bob"

    struct World {
        var alice: ProtocolClient
        var aliceToken: String
        var bob: ProtocolClient
        var bobToken: String
        var alonePhoto: String
        var sharedPhoto: String
        var bobPost: Int
    }

    /// alice and bob are friends; alice chats, writes in a room, posts, likes and comments on
    /// bob's post, sets a place, turns an activity on (matching bob), and keeps a memory with a
    /// photo only she owns and one bob uploaded too.
    private func populate(port: Int) throws -> World {
        let (alice, aliceToken, bob, bobToken) = try ProtocolClient.friends("alice", "bob", port: port)
        try alice.publish(Self.chat, "hi bob")
        try bob.publish(Self.chat, "hi alice")
        try bob.publish("room:lobby", "bob first")
        try alice.publish("room:lobby", "alice in the room")
        try bob.publish("room:lobby", "bob after")
        try alice.ok("post", ["text": "alice's post"])
        let bobPost = try #require(JSON.int((try bob.ok("post", ["text": "bob's post"])["post"] as? JSONObject)?["id"]))
        try alice.ok("like", ["post": bobPost])
        try alice.ok("comment", ["post": bobPost, "text": "alice's comment"])
        try alice.ok("place_set", ["label": "home", "lat": 52.52, "lon": 13.405, "radius": 100])
        try bob.ok("activity_on", ["activity": "coffee"])
        try alice.ok("activity_on", ["activity": "coffee"])
        let alone = PhotoRequest.photo(1)
        let shared = PhotoRequest.photo(2)
        for (bytes, token) in [(alone, aliceToken), (shared, aliceToken), (shared, bobToken)] {
            #expect([200, 201].contains(try PhotoRequest.upload(bytes, token: token, port: port).status))
        }
        let memory = try #require(JSON.int((try alice.ok("memory_create", ["title": "Berlin", "date": "2025-06-14"])["memory"] as? JSONObject)?["id"]))
        try alice.ok("point_add", ["memory": memory, "time": 1_750_000_000_000, "photos": [PhotoRequest.hash(alone), PhotoRequest.hash(shared)]])
        return World(
            alice: alice, aliceToken: aliceToken, bob: bob, bobToken: bobToken, alonePhoto: PhotoRequest.hash(alone),
            sharedPhoto: PhotoRequest.hash(shared), bobPost: bobPost)
    }

    /// Polls `condition` until it holds (work the server finishes off its core thread).
    private func waitUntil(_ what: String, timeout: Double = 20, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else { throw TestFailure("\(what): not within \(timeout) s") }
            usleep(20_000)
        }
    }

    private func photoFile(_ hash: String, in data: URL) -> String {
        data.appendingPathComponent("photos").appendingPathComponent(String(hash.prefix(2))).appendingPathComponent(hash).path
    }

    /// Nothing of alice is found by any op, history page, search or photo URL; bob keeps his own.
    private func expectAliceIsGone(_ world: World, port: Int, data: URL) throws {
        let bob = try ProtocolClient(port: port)
        _ = try bob.login("bob")
        let probe = try ProtocolClient(port: port)
        #expect(try probe.errorCode("login", ["login": "alice", "password": ProtocolClient.password]) == "invalid_credentials")
        #expect(try probe.errorCode("auth", ["token": world.aliceToken]) == "invalid_token")
        #expect((try bob.ok("user_search", ["prefix": "ali"])["users"] as? [String])?.contains("alice") == false)
        #expect((try bob.ok("friends")["friends"] as? [JSONObject])?.isEmpty == true)
        #expect(try bob.errorCode("where", ["user": "alice"]) == "user_not_found")
        #expect(try bob.errorCode("friend_request", ["user": "alice"]) == "user_not_found")
        // The chat room with her is gone whole; in the room her message is a tombstone.
        let chat = try bob.ok("history", ["channel": Self.chat])
        #expect(chat["epoch"] as? String == "" && (chat["publications"] as? [JSONObject])?.isEmpty == true, "\(chat)")
        let room = ((try bob.ok("history", ["channel": "room:lobby"])["publications"] as? [JSONObject]) ?? []).reversed().map { $0 }
        #expect(room.map { JSON.int($0["offset"]) } == [1, 2, 3])
        #expect(JSON.bool(room[1]["deleted"]) == true && room[1]["from"] == nil && room[1]["data"] == nil, "\(room)")
        #expect(room[0]["from"] as? String == "bob" && room[2]["from"] as? String == "bob")
        #expect(!JSON.text(try bob.ok("history", ["channel": "room:lobby"])).contains("alice"))
        // Her post, like and comment are gone; bob's post stays.
        let posts = try #require(try bob.ok("feed")["posts"] as? [JSONObject])
        #expect(posts.map { JSON.int($0["id"]) } == [world.bobPost], "\(posts)")
        #expect(JSON.int(posts[0]["likes"]) == 0 && JSON.int(posts[0]["comments"]) == 0)
        #expect((try bob.ok("comments", ["post": world.bobPost])["comments"] as? [JSONObject])?.isEmpty == true)
        // No match with her any more.
        #expect(!JSON.text(try bob.ok("matches")).contains("alice"))
        // The photo only she owned is gone from disk (removed on a photo worker right after the
        // deletion was logged); the shared one stays bob's.
        try waitUntil("her photo's file is removed") { !FileManager.default.fileExists(atPath: photoFile(world.alonePhoto, in: data)) }
        #expect(try PhotoRequest.download(world.alonePhoto, token: world.aliceToken, port: port).status == 401)
        #expect(try PhotoRequest.download(world.sharedPhoto, token: world.bobToken, port: port).status == 200)
        // The name is quarantined; her email is free.
        let stranger = try ProtocolClient(port: port)
        #expect(try stranger.errorCode("signup", ["username": "alice", "email": "x@example.com", "password": ProtocolClient.password]) == "username_taken")
        if try bob.ok("user_search", ["prefix": "alice2"])["users"] as? [String] == [] {
            _ = try stranger.signup("alice2", email: "alice@example.com")
        }
    }

    @Test(arguments: ["graceful", "kill"])
    func aUserDeletesTheirAccountWithTheirPassword(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await startHuddle(["--api-key", Self.key], dataDirectory: data)
        let world = try populate(port: server.port)
        try world.bob.subscribe("inbox:bob")
        try world.bob.subscribe("room:lobby")
        #expect(FileManager.default.fileExists(atPath: photoFile(world.alonePhoto, in: data)))

        // Refusals: no password, a wrong one; the account stays.
        #expect(try world.alice.errorCode("account_delete") == "bad_request")
        #expect(try world.alice.errorCode("account_delete", ["password": "not the password"]) == "invalid_credentials")
        let unauthenticated = try ProtocolClient(port: server.port)
        #expect(try unauthenticated.errorCode("account_delete", ["password": ProtocolClient.password]) == "not_authenticated")
        #expect((try world.alice.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "alice")

        func snapshotsWritten() -> Int { server.logText.components(separatedBy: "snapshot written").count - 1 }
        let snapshotsBefore = snapshotsWritten()
        try world.alice.ok("account_delete", ["password": ProtocolClient.password])
        #expect(try world.alice.closeCode()?.rawValue == 4001)
        // bob hears of it: the friendship ended in his inbox, her room message removed.
        let events = try world.bob.eventsBeforeBarrier()
        let notices = events.filter { $0["event"] as? String == "publication" && $0["channel"] as? String == "inbox:bob" }.compactMap { $0["type"] as? String }
        #expect(notices.suffix(2) == ["friend_removed", "match_ended"], "\(notices)")
        // Her room message goes with the first chunk of her channels, a turn after the deletion's.
        let removal = try events.first { $0["event"] as? String == "publication_removed" } ?? world.bob.nextEvent("publication_removed")
        #expect(removal["channel"] as? String == "room:lobby" && JSON.int(removal["offset"]) == 2, "\(removal)")
        try expectAliceIsGone(world, port: server.port, data: data)
        // A snapshot follows a deletion at once, and drops the older one and the log before it:
        // no log segment holds what she wrote any more.
        let deadline = Date().addingTimeInterval(30)
        while snapshotsWritten() < snapshotsBefore + 1 {
            guard Date() < deadline else { throw TestFailure("no two snapshots after the deletion:\n\(server.logText)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        let files = try FileManager.default.contentsOfDirectory(at: data, includingPropertiesForKeys: nil)
        #expect(files.filter { $0.pathExtension == "snap" }.count == 1, "the older snapshot, which held her, is gone: \(files)")
        for segment in files where segment.pathExtension == "log" {
            let bytes = try Data(contentsOf: segment)
            #expect(bytes.range(of: Data("alice in the room".utf8)) == nil, "\(segment.lastPathComponent) still holds her message")
        }

        if restart == "graceful" {
            #expect(try await server.stop() == 0)
        } else {
            try await server.kill9()
        }
        let restarted = try await startHuddle(["--api-key", Self.key], dataDirectory: data)
        try expectAliceIsGone(world, port: restarted.port, data: data)
        #expect(try await restarted.stop() == 0)
    }

    @Test func theOperatorDeletesAnAccount() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await startHuddle(["--api-key", Self.key], dataDirectory: data)
        let world = try populate(port: server.port)
        #expect(try HTTPExchange(port: server.port, "DELETE", "/api/v1/users/alice").status == 401)
        let unknown = try HTTPExchange(port: server.port, "DELETE", "/api/v1/users/nobody", key: Self.key)
        #expect(unknown.status == 404 && unknown.errorCode == "user_not_found", "\(unknown.body)")
        #expect(try HTTPExchange(port: server.port, "POST", "/api/v1/users/alice", key: Self.key).status == 405)
        let deleted = try HTTPExchange(port: server.port, "DELETE", "/api/v1/users/Alice", key: Self.key)
        #expect(deleted.status == 200, "\(deleted.body)")
        #expect(try world.alice.closeCode()?.rawValue == 4001)
        try expectAliceIsGone(world, port: server.port, data: data)
        try waitUntil("the metrics count the deletion and the photo") {
            let metrics = try HTTPExchange(port: server.port, "GET", "/metrics").body
            return metrics.contains("huddle_accounts_deleted_total 1\n") && metrics.contains("huddle_photos_removed_total 1\n")
        }
        let again = try HTTPExchange(port: server.port, "DELETE", "/api/v1/users/alice", key: Self.key)
        #expect(again.status == 404 && again.errorCode == "user_not_found")
        try await server.kill9()
        let restarted = try await startHuddle(["--api-key", Self.key], dataDirectory: data)
        try expectAliceIsGone(world, port: restarted.port, data: data)
        #expect(try await restarted.stop() == 0)
    }

    /// protocol.md "Deletion and retention": her channels go in chunks after the deletion's turn
    /// (one channel each, 300 ms apart here), reads show them erased at once, and a kill -9
    /// between two chunks leaves the erasure pending in the log: the restarted server finishes it.
    @Test func anErasureCutByAKill9IsFinishedAfterTheRestart() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let arguments = ["--api-key", Self.key, "--erasure-chunk-work", "1", "--erasure-chunk-interval", "300"]
        let server = try await startHuddle(arguments, dataDirectory: data, fsync: "always")
        let world = try populate(port: server.port)
        let clubs = (0..<6).map { "room:club\($0)" }
        for club in clubs {
            try world.alice.publish(club, "alice in \(club)")
            try world.bob.publish(club, "bob in \(club)")
        }
        try world.alice.ok("account_delete", ["password": ProtocolClient.password])
        try await server.waitForLog("erasure chunk")
        // Before the chunks are done, bob already reads her as gone.
        let chat = try world.bob.ok("history", ["channel": Self.chat])
        #expect(chat["epoch"] as? String == "" && (chat["publications"] as? [JSONObject])?.isEmpty == true, "\(chat)")
        for club in clubs { #expect(!JSON.text(try world.bob.ok("history", ["channel": club])).contains("alice"), "\(club)") }
        #expect(!server.logText.contains("erasure finished"), "the kill lands between two chunks")
        try await server.kill9()

        let restarted = try await startHuddle(arguments, dataDirectory: data, fsync: "always")
        try await restarted.waitForLog("erasure finished", timeout: 30)
        try expectAliceIsGone(world, port: restarted.port, data: data)
        let bob = try ProtocolClient(port: restarted.port)
        _ = try bob.login("bob")
        for club in clubs {
            let page = try bob.ok("history", ["channel": club])
            #expect(!JSON.text(page).contains("alice") && (page["publications"] as? [JSONObject])?.count == 2, "\(page)")
        }
        let metrics = try PrometheusText.fetch(port: restarted.port)
        #expect((metrics.value("huddle_erasure_chunks_total") ?? 0) >= 1, "the restarted server erased what was left")
        #expect(try await restarted.stop() == 0)
    }
}
