import Foundation
import Testing

/// A data directory written by an older release starts on this one: `Data/log-format-0`, made by
/// the last release whose records were synthesized Codable (see `Data/README.md`).
@Suite struct LegacyDataDirectoryTests {
    static let formatZero = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Data/log-format-0")
    static let arguments = ["--activities", "Coffee,Gym,Anything", "--snapshot-interval", "3600"]

    /// Writes `LegacyDataScenario` into the directory named by `HUDDLE_WRITE_LEGACY_DATA` (run
    /// with the release whose format the directory is to show); does nothing otherwise.
    @Test func writeTheScenarioWhenAsked() async throws {
        guard let path = ProcessInfo.processInfo.environment["HUDDLE_WRITE_LEGACY_DATA"], !path.isEmpty else { return }
        try await LegacyDataScenario.write(to: URL(fileURLWithPath: path))
    }

    static func copyOfFormatZero() throws -> URL {
        let data = try ServerProcess.makeDataDirectory()
        try FileManager.default.removeItem(at: data)
        try FileManager.default.copyItem(at: formatZero, to: data)
        return data
    }

    /// Its snapshot and the 47 records after it load; what the scenario did is all there; the
    /// shutdown snapshot is today's format, and the next start reads that.
    @Test func formatZeroDataStartsAndKeepsEverything() async throws {
        let data = try Self.copyOfFormatZero()
        defer { try? FileManager.default.removeItem(at: data) }
        #expect(try await DurableServer.dataCommand("verify", dataDirectory: data).status == 0)
        // An exit budget a loaded machine cannot run out: the shutdown snapshot is the point.
        let server = try await DurableServer.start(Self.arguments + DurableServer.patientExit, dataDirectory: data)
        #expect(server.logText.contains("snapshot-sequence=78"))
        #expect(server.logText.contains("replayed=47"))
        try Self.checkTheScenario(port: server.port)
        #expect(try await server.stop() == 0)
        #expect(server.logText.contains("shutdown snapshot written"))
        let snapshot = try #require(try DataFiles.snapshots(data).last).lastPathComponent
        #expect(snapshot != "snapshot-000000000000004e.snap")

        let again = try await DurableServer.start(Self.arguments, dataDirectory: data)
        #expect(again.logText.contains("loaded snapshot file=\(snapshot)"))
        // Nothing the first server logged is replayed twice: what the shutdown snapshot holds is
        // skipped (a time-driven expiry may still be logged after it, and is replayed once).
        #expect(!again.logText.contains("replayed=47"))
        try Self.checkTheScenario(port: again.port)
        #expect(try await again.stop() == 0)
        #expect(try await DurableServer.dataCommand("verify", dataDirectory: data).status == 0)
    }

    /// Without its snapshot, the whole format 0 log replays to the same state.
    @Test func theWholeFormatZeroLogReplays() async throws {
        let data = try Self.copyOfFormatZero()
        defer { try? FileManager.default.removeItem(at: data) }
        for snapshot in try DataFiles.snapshots(data) { try FileManager.default.removeItem(at: snapshot) }
        let server = try await DurableServer.start(Self.arguments, dataDirectory: data)
        #expect(server.logText.contains("replayed=125"))
        try Self.checkTheScenario(port: server.port)
        server.kill9()
    }

    /// What `LegacyDataScenario` did, seen through the protocol.
    static func checkTheScenario(port: Int) throws {
        let alice = try V1Client(port: port)
        try alice.logIn("alice")
        for name in ["bob", "carol", "dave", "erin"] { try V1Client(port: port).logIn(name) }

        let friends = try alice.ok("friends")["friends"] as? [[String: Any]] ?? []
        #expect(friends.compactMap { $0["username"] as? String } == ["bob", "carol"])
        let chat = try alice.fullHistory("chat:alice~bob")
        #expect(chat.publications.compactMap { ($0["data"] as? [String: Any])?["text"] as? String } == ["hello bob", "again", "back"])
        let room = try alice.fullHistory("room:lobby")
        #expect(room.publications.count == 2)
        #expect(jsonEqual(room.publications.first?["data"], LegacyDataScenario.roomMessage))
        #expect(room.publications.first?["type"] as? String == "note")
        // Kept results: retries of keyed writes are answered from them.
        let chatRetry = try alice.ok("publish", ["channel": "chat:alice~bob", "data": ["text": "again"], "client_id": "m-2"])
        #expect(chatRetry["duplicate"] as? Bool == true && chatRetry["offset"] as? Int == 2)

        let posts = try alice.ok("feed")["posts"] as? [[String: Any]] ?? []
        #expect(posts.compactMap { $0["text"] as? String } == ["gym later", "coffee anyone?"])
        #expect(posts.last?["likes"] as? Int == 1 && posts.last?["comments"] as? Int == 1)
        let postRetry = try alice.ok("post", ["text": "coffee anyone?", "client_id": "p-1"])
        #expect(postRetry["duplicate"] as? Bool == true)
        #expect((postRetry["post"] as? [String: Any])?["id"] as? Int == posts.last?["id"] as? Int)

        // The data's activities expire (24 h at most after the data was made), so the live match
        // may be over when this runs; the notice that it began stays in alice's inbox either way.
        let inbox = try alice.fullHistory("inbox:alice").publications
        let matchNotices = inbox.filter { $0["type"] as? String == "match" }.compactMap { $0["data"] as? [String: Any] }
        #expect(matchNotices.map { "\($0["user"] ?? "")/\($0["activity"] ?? "")" } == ["bob/Coffee", "carol/Gym", "bob/Gym"])

        let places = try alice.ok("places")["places"] as? [[String: Any]] ?? []
        #expect(places.compactMap { $0["label"] as? String } == ["Home", "Gym"])
        #expect(try V1Client(port: port).loggedIn("bob").ok("where", ["user": "alice"])["place"] as? String == "Gym")

        let memories = try alice.ok("memories")["memories"] as? [[String: Any]] ?? []
        #expect(memories.compactMap { $0["title"] as? String } == ["Porto", "Lisbon trip"])
        let lisbon = try #require(memories.last?["id"] as? Int)
        let points = (try alice.ok("memory", ["memory": lisbon])["memory"] as? [String: Any])?["points"] as? [[String: Any]] ?? []
        #expect(points.compactMap { $0["note"] as? String } == ["tram 28"])
        let token = try V1Client(port: port).ok("login", ["login": "alice", "password": "pw-alice-secret"])["token"] as? String
        #expect(try PhotoRequest.download(PhotoRequest.hash(LegacyDataScenario.photo), token: token, port: port).body == LegacyDataScenario.photo)
    }
}

extension V1Client {
    /// This client, logged in as `name`.
    func loggedIn(_ name: String) throws -> V1Client {
        try logIn(name)
        return self
    }
}
