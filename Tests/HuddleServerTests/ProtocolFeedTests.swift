import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Feed", over real sockets against the real binary: posting, the feed of one's
/// own and one's friends' posts paged to the end and past it, likes and the double-like
/// refusals, comments inline and paged, deletion, live events to friends and not to strangers —
/// and all of it across a restart, graceful or SIGKILL.
@Suite(.ownThread) struct ProtocolFeedTests {
    /// alice and bob, friends, each with the presence event of the befriending consumed; carol,
    /// a stranger to both.
    private func circle(port: Int) throws -> (alice: ProtocolClient, aliceToken: String, bob: ProtocolClient, bobToken: String, carol: ProtocolClient) {
        let (alice, aliceToken) = try ProtocolClient.signedUp("alice", port: port)
        let (bob, bobToken) = try ProtocolClient.signedUp("bob", port: port)
        let (carol, _) = try ProtocolClient.signedUp("carol", port: port)
        try alice.ok("friend_request", ["user": "bob"])
        try bob.ok("friend_accept", ["user": "alice"])
        _ = try alice.nextEvent("presence")
        _ = try bob.nextEvent("presence")
        return (alice, aliceToken, bob, bobToken, carol)
    }

    /// Posts and returns the post object of the reply.
    @discardableResult
    private func post(_ client: ProtocolClient, _ text: String, _ extra: JSONObject = [:]) throws -> JSONObject {
        var fields = extra
        fields["text"] = text
        return try #require(try client.ok("post", fields)["post"] as? JSONObject)
    }

    private func ids(_ result: JSONObject, _ key: String = "posts") -> [Int] {
        (result[key] as? [JSONObject] ?? []).compactMap { JSON.int($0["id"]) }
    }

    @Test func postsMakeAFeedOfOnesOwnAndFriendsNewestFirstPagedToTheEndAndPast() async throws {
        let server = try await startHuddle()
        let (alice, _, bob, _, carol) = try circle(port: server.port)
        let before = JSON.nowMilliseconds
        let first = try post(alice, "gym at 6?", ["activity": "Gym", "at": 1_763_715_600_000])
        #expect(JSON.int(first["id"]) == 1 && first["author"] as? String == "alice" && first["text"] as? String == "gym at 6?")
        #expect(first["activity"] as? String == "Gym" && JSON.int(first["at"]) == 1_763_715_600_000)
        #expect(JSON.int(first["time"]).map { $0 >= before - 1000 } == true)
        #expect(JSON.int(first["likes"]) == 0 && JSON.bool(first["liked"]) == false && JSON.int(first["comments"]) == 0)
        #expect((first["recent_comments"] as? [JSONObject])?.isEmpty == true)
        let plain = try post(bob, "coffee")
        #expect(JSON.isNull(plain["activity"]) && JSON.isNull(plain["at"]))
        try post(carol, "nobody sees this")
        for text in ["a", "b", "c"] { try post(alice, text) }
        try post(bob, "d")
        // alice: her own and bob's, newest first; never carol's.
        let expected = [7, 6, 5, 4, 2, 1]
        let whole = try alice.ok("feed")
        #expect(ids(whole) == expected && JSON.isNull(whole["next_before"]))
        var paged: [Int] = []
        var cursor: Int?
        repeat {
            var fields: JSONObject = ["limit": 4]
            if let cursor { fields["before"] = cursor }
            let page = try alice.ok("feed", fields)
            paged += ids(page)
            cursor = JSON.int(page["next_before"])
            #expect(cursor == nil || cursor == ids(page).last)
        } while cursor != nil
        #expect(paged == expected)
        // Paging past the end is an empty page, not an error; a malformed cursor is.
        let past = try alice.ok("feed", ["before": 1])
        #expect(ids(past).isEmpty && JSON.isNull(past["next_before"]))
        #expect(try alice.errorCode("feed", ["before": "abc"]) == "bad_request")
        #expect(try alice.errorCode("feed", ["before": 0]) == "bad_request")
        #expect(try alice.errorCode("feed", ["limit": 51]) == "bad_request")
        #expect(ids(try carol.ok("feed")) == [3])
        // Friendship decides, as it is now.
        try bob.ok("friend_remove", ["user": "alice"])
        #expect(ids(try bob.ok("feed")) == [7, 2])
        // The default page is 10.
        for index in 1...11 { try post(carol, "c\(index)") }
        let defaultPage = try carol.ok("feed")
        #expect(ids(defaultPage).count == 10 && JSON.int(defaultPage["next_before"]) == ids(defaultPage).last)

        #expect(try alice.errorCode("post", ["text": ""]) == "bad_request")
        #expect(try alice.errorCode("post", ["text": String(repeating: "x", count: 1001)]) == "bad_request")
        #expect(try alice.errorCode("post", ["text": "t", "activity": String(repeating: "x", count: 33)]) == "bad_request")
        #expect(try alice.errorCode("post", ["text": "t", "at": -1]) == "bad_request")
        #expect(try ProtocolClient(port: server.port).errorCode("post", ["text": "t"]) == "not_authenticated")
        #expect(try ProtocolClient(port: server.port).errorCode("feed") == "not_authenticated")
    }

    @Test func aLikeTogglesSetsAndIsRefusedTwice() async throws {
        let server = try await startHuddle()
        let (alice, _, bob, _, carol) = try circle(port: server.port)
        let id = JSON.int(try post(alice, "like me")["id"])!
        let liked = try bob.ok("like", ["post": id])
        #expect(JSON.int(liked["post"]) == id && JSON.bool(liked["liked"]) == true && JSON.int(liked["likes"]) == 1)
        let undone = try bob.ok("like", ["post": id])
        #expect(JSON.bool(undone["liked"]) == false && JSON.int(undone["likes"]) == 0, "a second like undoes the first")
        #expect(JSON.int(try bob.ok("like", ["post": id, "liked": true])["likes"]) == 1)
        let double = try bob.failure("like", ["post": id, "liked": true])
        #expect(double["code"] as? String == "already_liked")
        #expect(JSON.int(try alice.ok("like", ["post": id, "liked": true])["likes"]) == 2)
        let shown = try #require((try bob.ok("feed")["posts"] as? [JSONObject])?.first)
        #expect(JSON.int(shown["likes"]) == 2 && JSON.bool(shown["liked"]) == true)
        #expect(JSON.int(try bob.ok("like", ["post": id, "liked": false])["likes"]) == 1)
        #expect(try bob.errorCode("like", ["post": id, "liked": false]) == "not_liked")
        let forAlice = try #require((try alice.ok("feed")["posts"] as? [JSONObject])?.first)
        #expect(JSON.int(forAlice["likes"]) == 1 && JSON.bool(forAlice["liked"]) == true)
        // A stranger's like reads exactly like one on a post that does not exist.
        let hidden = try carol.failure("like", ["post": id])
        let missing = try carol.failure("like", ["post": 999])
        #expect(hidden["code"] as? String == "post_not_found" && missing["code"] as? String == "post_not_found")
        #expect(try bob.errorCode("like", ["post": "1"]) == "bad_request")
        #expect(try bob.errorCode("like", ["post": id, "liked": 1]) == "bad_request")
    }

    @Test func commentsShowTheNewestFiveInlineAndPageTheRest() async throws {
        let server = try await startHuddle()
        let (alice, _, bob, _, carol) = try circle(port: server.port)
        let id = JSON.int(try post(alice, "thoughts?")["id"])!
        for index in 1...7 {
            let made = try (index % 2 == 0 ? alice : bob).ok("comment", ["post": id, "text": "c\(index)"])
            let comment = try #require(made["comment"] as? JSONObject)
            #expect(JSON.int(made["post"]) == id && JSON.int(made["comments"]) == index)
            #expect(JSON.int(comment["id"]) == index && comment["text"] as? String == "c\(index)")
            #expect(comment["author"] as? String == (index % 2 == 0 ? "alice" : "bob") && JSON.int(comment["time"]) != nil)
        }
        let shown = try #require((try bob.ok("feed")["posts"] as? [JSONObject])?.first)
        #expect(JSON.int(shown["comments"]) == 7)
        #expect((shown["recent_comments"] as? [JSONObject])?.compactMap { $0["text"] as? String } == ["c7", "c6", "c5", "c4", "c3"])
        let page1 = try bob.ok("comments", ["post": id, "limit": 5])
        #expect(JSON.int(page1["post"]) == id && ids(page1, "comments") == [7, 6, 5, 4, 3] && JSON.int(page1["next_before"]) == 3)
        let page2 = try bob.ok("comments", ["post": id, "limit": 5, "before": 3])
        #expect(ids(page2, "comments") == [2, 1] && JSON.isNull(page2["next_before"]))
        let past = try bob.ok("comments", ["post": id, "before": 1])
        #expect(ids(past, "comments").isEmpty && JSON.isNull(past["next_before"]))
        #expect(ids(try bob.ok("comments", ["post": id]), "comments") == [7, 6, 5, 4, 3, 2, 1], "10 by default")

        #expect(try carol.errorCode("comment", ["post": id, "text": "hi"]) == "post_not_found")
        #expect(try carol.errorCode("comments", ["post": id]) == "post_not_found")
        #expect(try bob.errorCode("comment", ["post": id, "text": ""]) == "bad_request")
        #expect(try bob.errorCode("comment", ["post": id, "text": String(repeating: "x", count: 501)]) == "bad_request")
        #expect(try bob.errorCode("comments", ["post": id, "before": "x"]) == "bad_request")
    }

    @Test func onlyTheAuthorDeletesAPost() async throws {
        let server = try await startHuddle()
        let (alice, _, bob, _, carol) = try circle(port: server.port)
        let id = JSON.int(try post(alice, "oops")["id"])!
        try bob.ok("comment", ["post": id, "text": "ha"])
        #expect(try bob.errorCode("post_delete", ["post": id]) == "forbidden")
        #expect(try carol.errorCode("post_delete", ["post": id]) == "post_not_found")
        #expect(try alice.ok("post_delete", ["post": id]).isEmpty)
        #expect(ids(try bob.ok("feed")).isEmpty)
        #expect(try alice.errorCode("post_delete", ["post": id]) == "post_not_found")
        #expect(try bob.errorCode("comments", ["post": id]) == "post_not_found")
        #expect(JSON.int(try post(alice, "again")["id"]) == id + 1, "ids are never reused")
    }

    @Test func liveEventsReachTheAuthorAndFriendsButNotStrangers() async throws {
        let server = try await startHuddle()
        let (alice, aliceToken, bob, _, carol) = try circle(port: server.port)
        let alicesPhone = try ProtocolClient.authenticated(aliceToken, port: server.port)

        let made = try post(alice, "live", ["activity": "Coffee"])
        let id = try #require(JSON.int(made["id"]))
        for device in [alice, alicesPhone, bob] {
            let event = try device.nextEvent("post")
            #expect(JSON.text(event["post"] as Any) == JSON.text(made) && JSON.int(event["time"]) == JSON.int(made["time"]))
        }
        try bob.ok("like", ["post": id])
        for device in [alice, alicesPhone, bob] {
            let event = try device.nextEvent("like")
            #expect(JSON.int(event["post"]) == id && event["author"] as? String == "alice" && event["user"] as? String == "bob")
            #expect(JSON.bool(event["liked"]) == true && JSON.int(event["likes"]) == 1)
        }
        try bob.ok("like", ["post": id])
        let unlike = try alicesPhone.nextEvent("like")
        #expect(JSON.bool(unlike["liked"]) == false && JSON.int(unlike["likes"]) == 0)
        let reply = try bob.ok("comment", ["post": id, "text": "on my way"])
        _ = try alice.nextEvent("like")
        for device in [alice, alicesPhone] {
            let event = try device.nextEvent("comment")
            #expect(JSON.int(event["post"]) == id && event["author"] as? String == "alice" && JSON.int(event["comments"]) == 1)
            #expect(JSON.text(event["comment"] as Any) == JSON.text(reply["comment"] as Any))
        }
        _ = try bob.nextEvent("like")
        _ = try bob.nextEvent("comment")
        try alice.ok("post_delete", ["post": id])
        for device in [alice, alicesPhone, bob] {
            let event = try device.nextEvent("post_deleted")
            #expect(JSON.int(event["post"]) == id && event["author"] as? String == "alice")
        }
        // carol is no friend of alice's: she heard nothing of it; her own post reaches only her.
        #expect(try carol.eventIfAny(within: 0.3) == nil)
        try post(carol, "mine")
        #expect(try carol.nextEvent("post")["post"] != nil)
        #expect(try bob.eventIfAny(within: 0.3) == nil && alice.eventIfAny(within: 0.1) == nil)
    }

    /// Posts, likes, comments and a deletion survive a restart — graceful (a snapshot) or
    /// SIGKILL (the log replayed) — and the id counters carry on where they were.
    @Test(arguments: ["graceful", "kill"])
    func everythingSurvivesARestart(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var tokens: (alice: String, bob: String) = ("", "")
        var kept = 0
        do {
            let server = try await DurableServer.start(["--fsync", "always"], dataDirectory: data)
            let (alice, aliceToken, bob, bobToken, _) = try circle(port: server.port)
            tokens = (aliceToken, bobToken)
            kept = JSON.int(try post(alice, "survives", ["activity": "Eat", "at": 1_763_800_000_000])["id"])!
            let gone = JSON.int(try post(alice, "deleted")["id"])!
            try post(bob, "bob's")
            try bob.ok("like", ["post": kept])
            try alice.ok("like", ["post": kept])
            try alice.ok("like", ["post": kept, "liked": false])
            try bob.ok("comment", ["post": kept, "text": "first"])
            try alice.ok("comment", ["post": kept, "text": "second \"quoted\" ☕"])
            try alice.ok("post_delete", ["post": gone])
            if restart == "graceful" {
                #expect(try await server.stop() == 0)
            } else {
                server.kill9()
            }
        }
        let server = try await DurableServer.start(["--fsync", "always"], dataDirectory: data)
        let bob = try ProtocolClient.authenticated(tokens.bob, port: server.port)
        let feed = try bob.ok("feed")
        let posts = try #require(feed["posts"] as? [JSONObject])
        #expect(posts.compactMap { $0["text"] as? String } == ["bob's", "survives"])
        let survivor = posts[1]
        #expect(JSON.int(survivor["id"]) == kept && survivor["activity"] as? String == "Eat" && JSON.int(survivor["at"]) == 1_763_800_000_000)
        #expect(JSON.int(survivor["likes"]) == 1 && JSON.bool(survivor["liked"]) == true)
        #expect(JSON.int(survivor["comments"]) == 2)
        #expect((survivor["recent_comments"] as? [JSONObject])?.compactMap { $0["text"] as? String } == ["second \"quoted\" ☕", "first"])
        // The like still counts once, and the counters go on from where they were.
        #expect(try bob.errorCode("like", ["post": kept, "liked": true]) == "already_liked")
        let third = try #require(try bob.ok("comment", ["post": kept, "text": "third"])["comment"] as? JSONObject)
        #expect(JSON.int(third["id"]) == 3)
        let alice = try ProtocolClient.authenticated(tokens.alice, port: server.port)
        #expect(JSON.int(try post(alice, "after")["id"]) == 4)
        #expect(try alice.errorCode("like", ["post": 2]) == "post_not_found", "the deleted post stays deleted")
        #expect(try await server.stop() == 0)
    }
}
