import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Tombstones" and the HTTP API's `remove`, over real sockets against the real
/// binary: the operator removes a chat message (a tombstone at its offset, offsets contiguous,
/// subscribers told, unread counts without it, resuming across it) or a post, and all of it
/// survives a graceful restart and a kill -9.
@Suite(.ownThread) struct ProtocolRemovalTests {
    static let key = "test-api-key-0123456789"
    static let room = "chat:alice~bob"

    private func friends(port: Int) throws -> (alice: ProtocolClient, bob: ProtocolClient) {
        let (alice, _, bob, _) = try ProtocolClient.friends("alice", "bob", port: port)
        return (alice, bob)
    }

    private func remove(_ body: String, port: Int, key: String? = Self.key) throws -> HTTPExchange {
        try HTTPExchange(port: port, "POST", "/api/v1/remove", body: body, key: key)
    }

    /// The history page of the room, oldest first, as `[offset: publication]`.
    private func history(_ client: ProtocolClient) throws -> [JSONObject] {
        let page = try client.ok("history", ["channel": Self.room])
        return ((page["publications"] as? [JSONObject]) ?? []).reversed()
    }

    private func expectTombstoneAtTwo(_ publications: [JSONObject]) {
        #expect(publications.map { JSON.int($0["offset"]) } == [1, 2, 3], "offsets stay contiguous: \(publications)")
        let tombstone = publications[1]
        #expect(JSON.bool(tombstone["deleted"]) == true)
        #expect(Set(tombstone.keys) == ["offset", "deleted"], "nothing of what was written: \(tombstone)")
        #expect(JSON.bool(publications[0]["deleted"]) == nil && JSON.bool(publications[2]["deleted"]) == nil)
        #expect(JSON.text(publications[2]["data"] ?? 0) == #""three""#)
    }

    @Test(arguments: ["graceful", "kill"])
    func anOperatorRemovesAChatMessageAsATombstone(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await startHuddle(["--api-key", Self.key], dataDirectory: data)
        let (alice, bob) = try friends(port: server.port)
        try bob.subscribe(Self.room)
        for text in ["one", "two", "three"] { try alice.publish(Self.room, text) }
        let live = try bob.publications(3)
        let epoch = try #require(live.first?["epoch"] as? String)
        #expect(JSON.int(try bob.ok("unread")["total"]) == 3)

        // Refusals: no key, a malformed body, nothing at the offset.
        #expect(try remove(#"{"channel": "chat:alice~bob", "offset": 2}"#, port: server.port, key: nil).status == 401)
        let malformed = try remove(#"{"channel": "chat:alice~bob", "offset": 0}"#, port: server.port)
        #expect(malformed.status == 400 && malformed.errorCode == "bad_request", "\(malformed.body)")
        let both = try remove(#"{"channel": "chat:alice~bob", "offset": 2, "post": 1}"#, port: server.port)
        #expect(both.status == 400 && both.errorCode == "bad_request", "\(both.body)")
        let missing = try remove(#"{"channel": "chat:alice~bob", "offset": 9}"#, port: server.port)
        #expect(missing.status == 404 && missing.errorCode == "publication_not_found", "\(missing.body)")

        let removed = try remove(#"{"channel": "chat:alice~bob", "offset": 2}"#, port: server.port)
        #expect(removed.status == 200, "\(removed.body)")
        let event = try bob.nextEvent("publication_removed")
        #expect(event["channel"] as? String == Self.room && event["epoch"] as? String == epoch && JSON.int(event["offset"]) == 2, "\(event)")
        let again = try remove(#"{"channel": "chat:alice~bob", "offset": 2}"#, port: server.port)
        #expect(again.status == 404 && again.errorCode == "publication_not_found", "removed already: \(again.body)")
        try expectTombstoneAtTwo(history(alice))
        #expect(try HTTPExchange(port: server.port, "GET", "/metrics").body.contains("huddle_publications_removed_total 1\n"))
        // A removed message is nothing to read.
        #expect(JSON.int(try bob.ok("unread")["total"]) == 2)

        if restart == "graceful" {
            #expect(try await server.stop() == 0)
        } else {
            try await server.kill9()
        }
        let restarted = try await startHuddle(["--api-key", Self.key], dataDirectory: data)
        let bobAgain = try ProtocolClient(port: restarted.port)
        _ = try bobAgain.login("bob")
        try expectTombstoneAtTwo(history(bobAgain))
        #expect(JSON.int(try bobAgain.ok("unread")["total"]) == 2, "after a \(restart) restart")
        // Resuming after offset 1 recovers the tombstone and what follows it, with no gap.
        let resumed = try bobAgain.subscribe(Self.room, since: (epoch, 1))
        #expect(JSON.bool(resumed["recovered"]) == true, "\(resumed)")
        let recovered = (resumed["publications"] as? [JSONObject]) ?? []
        #expect(recovered.map { JSON.int($0["offset"]) } == [2, 3])
        #expect(JSON.bool(recovered.first?["deleted"]) == true)
        // The HTTP API's history shows the same tombstone.
        let page = try HTTPExchange(port: restarted.port, "GET", "/api/v1/history?channel=chat%3Aalice~bob", key: Self.key)
        let listed = try #require(page.json?["publications"] as? [JSONObject], "\(page.body)")
        #expect(listed.map { JSON.int($0["offset"]) } == [3, 2, 1] && JSON.bool(listed[1]["deleted"]) == true)
        #expect(try await restarted.stop() == 0)
    }

    @Test func anOperatorRemovesAPostAndItsFriendsAreTold() async throws {
        let server = try await startHuddle(["--api-key", Self.key])
        let (alice, bob) = try friends(port: server.port)
        let post = try #require(try alice.ok("post", ["text": "reported"])["post"] as? JSONObject)
        let id = try #require(JSON.int(post["id"]))
        _ = try bob.nextEvent("post")
        let comment = try #require(JSON.int((try bob.ok("comment", ["post": id, "text": "abusive"])["comment"] as? JSONObject)?["id"]))
        _ = try alice.nextEvent("post")
        _ = try alice.nextEvent("comment")
        let noComment = try remove(#"{"post": \#(id), "comment": 99}"#, port: server.port)
        #expect(noComment.status == 404 && noComment.errorCode == "comment_not_found", "\(noComment.body)")
        #expect(try remove(#"{"post": \#(id), "comment": \#(comment)}"#, port: server.port).status == 200)
        let removedComment = try alice.nextEvent("comment_removed")
        #expect(JSON.int(removedComment["comment"]) == comment && JSON.int(removedComment["comments"]) == 0, "\(removedComment)")
        #expect((try alice.ok("comments", ["post": id])["comments"] as? [JSONObject])?.isEmpty == true)
        _ = try bob.nextEvent("comment")
        _ = try bob.nextEvent("comment_removed")
        let missing = try remove(#"{"post": 99}"#, port: server.port)
        #expect(missing.status == 404 && missing.errorCode == "post_not_found", "\(missing.body)")
        let removed = try remove(#"{"post": \#(id)}"#, port: server.port)
        #expect(removed.status == 200, "\(removed.body)")
        let event = try bob.nextEvent("post_deleted")
        #expect(JSON.int(event["post"]) == id && event["author"] as? String == "alice", "\(event)")
        #expect((try bob.ok("feed")["posts"] as? [JSONObject])?.isEmpty == true)
        #expect(try alice.errorCode("comment", ["post": id, "text": "still?"]) == "post_not_found")
        #expect(try await server.stop() == 0)
    }
}
