import ChildProcessExit
import Foundation
import Testing

/// Issue 5's acceptance scenario, end to end against the real binary over real sockets, with a
/// local webhook receiver standing in for the push gateway: two users sign up and befriend; one
/// is offline while the other writes — the badge rises, the receiver gets the hand-off, the
/// messages arrive on reconnect exactly once, and marking them read clears the badge; a
/// friend's post, like and comment reach the other live; and a restart keeps all of it without
/// pushing anything again.
@Suite(.ownThread) struct Issue5ScenarioTests {
    static let room = "chat:alice~bob"

    @Test func offlineMessagesArePushedRecoveredOnceAndReadThenTheFeedIsLiveAndAllOfItSurvivesARestart() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        var server = try await startScenarioServer(webhook: receiver.url, dataDirectory: data)

        // 1. alice and bob sign up; alice asks bob to be friends, with a message.
        let (alice, aliceToken) = try ProtocolClient.signedUp("alice", port: server.port)
        let bobToken: String
        let saved: (epoch: String, offset: Int)
        do {
            let bob = try ProtocolClient(port: server.port)
            bobToken = try bob.signup("bob")
            try bob.subscribe("inbox:bob")
            #expect(try alice.ok("friend_request", ["user": "bob", "message": "coffee sometime?"])["status"] as? String == "requested")

            // 2. bob, online, sees the request arrive in his inbox and accepts it.
            let request = try inboxNotice(bob, "bob", "friend_request")
            #expect(JSON.text(request) == JSON.text(["from": "alice", "to": "bob", "message": "coffee sometime?"]))
            try bob.ok("friend_accept", ["user": "alice"])
            #expect(JSON.text(try inboxNotice(bob, "bob", "friend_accepted")) == JSON.text(["from": "alice", "to": "bob"]))
            try expectPresence(of: "alice", online: true, toldTo: bob)
            try expectPresence(of: "bob", online: true, toldTo: alice)
            #expect(JSON.text(try alice.ok("friends")) == JSON.text(["friends": [["username": "bob", "online": true]]]))
            #expect(receiver.requests.isEmpty, "both were online: nothing to push")

            // 3. bob remembers where he is in the room (nothing yet), then his phone goes away.
            let subscribed = try bob.subscribe(Self.room)
            saved = (try #require(subscribed["epoch"] as? String), try #require(JSON.int(subscribed["offset"])))
            #expect(saved.offset == 0)
        }
        try expectPresence(of: "bob", online: false, toldTo: alice)

        // 4. alice writes three messages, retrying the second with its client_id: stored once.
        let texts = ["are you up?", "coffee at 8?", "bring the book"]
        for (index, text) in texts.enumerated() {
            let sent = try alice.ok("publish", ["channel": Self.room, "data": ["text": text], "client_id": "m-\(index + 1)"])
            #expect(JSON.int(sent["offset"]) == index + 1 && sent["duplicate"] == nil)
        }
        let retry = try alice.ok("publish", ["channel": Self.room, "data": ["text": texts[1]], "client_id": "m-2"])
        #expect(JSON.int(retry["offset"]) == 2 && JSON.bool(retry["duplicate"]) == true)

        // 5. The webhook gets exactly three chat_message hand-offs, the badge rising 1, 2, 3.
        let notifications = try await receiver.waitForRequests(3).map(\.json)
        try await Task.sleep(for: .milliseconds(500))
        #expect(receiver.requests.count == 3, "the retried message is not pushed again")
        #expect(receiver.notifications.map { JSON.int($0["badge"]) } == [1, 2, 3])
        #expect(receiver.notifications.map { $0["body"] as? String } == texts)
        #expect(receiver.notifications.map { $0["id"] as? String } == ["chat:alice~bob/1", "chat:alice~bob/2", "chat:alice~bob/3"])
        for notification in notifications {
            #expect(notification["kind"] as? String == "chat_message" && notification["user"] as? String == "bob")
            #expect(notification["title"] as? String == "alice" && notification["from"] as? String == "alice")
            #expect(notification["target"] as? String == "huddle://chat/chat:alice~bob")
        }

        // 6. bob reconnects on a new connection with his token: the badge says 3, and
        //    subscribing from the saved position recovers exactly those three, in order, once.
        let bobAgain = try ProtocolClient.authenticated(bobToken, port: server.port)
        try expectPresence(of: "bob", online: true, toldTo: alice)
        let unread = try bobAgain.ok("unread")
        #expect(JSON.int(unread["total"]) == 3)
        #expect((unread["rooms"] as? [JSONObject])?.map { $0["channel"] as? String } == [Self.room])
        let recovered = try bobAgain.subscribe(Self.room, since: saved)
        #expect(JSON.bool(recovered["recovered"]) == true && JSON.int(recovered["offset"]) == 3)
        let missed = try #require(recovered["publications"] as? [JSONObject])
        #expect(missed.map { JSON.int($0["offset"]) } == [1, 2, 3])
        #expect(missed.map { ($0["data"] as? JSONObject)?["text"] as? String } == texts)
        #expect(missed.map { $0["client_id"] as? String } == ["m-1", "m-2", "m-3"])
        #expect(missed.allSatisfy { $0["from"] as? String == "alice" })
        #expect(try bobAgain.eventsBeforeBarrier().isEmpty, "nothing arrives a second time as a live event")

        // 7. Marking them read clears the badge.
        let marked = try bobAgain.ok("mark_read", ["channel": Self.room, "offset": 3])
        #expect(JSON.int(marked["read"]) == 3 && JSON.int(marked["unread"]) == 0 && JSON.int(marked["badge"]) == 0)
        #expect(JSON.int(try bobAgain.ok("unread")["total"]) == 0)

        // 8. Both online: bob posts, and alice sees it live.
        let post = try #require(try bobAgain.ok("post", ["text": "gym at 6?", "activity": "Gym"])["post"] as? JSONObject)
        let postID = try #require(JSON.int(post["id"]))
        #expect(JSON.text(try alice.nextEvent("post")["post"] as Any) == JSON.text(post))
        _ = try bobAgain.nextEvent("post")

        // 9. alice likes it: bob is told, the count is 1, and liking it again is refused.
        let liked = try alice.ok("like", ["post": postID, "liked": true])
        #expect(JSON.bool(liked["liked"]) == true && JSON.int(liked["likes"]) == 1)
        let likeEvent = try bobAgain.nextEvent("like")
        #expect(JSON.int(likeEvent["post"]) == postID && likeEvent["user"] as? String == "alice" && likeEvent["author"] as? String == "bob")
        #expect(JSON.bool(likeEvent["liked"]) == true && JSON.int(likeEvent["likes"]) == 1)
        #expect(try alice.errorCode("like", ["post": postID, "liked": true]) == "already_liked")
        _ = try alice.nextEvent("like")

        // 10. alice comments: bob is told, and his feed shows the post with its like and comment.
        let commented = try alice.ok("comment", ["post": postID, "text": "in! 6 sharp"])
        let comment = try #require(commented["comment"] as? JSONObject)
        let commentEvent = try bobAgain.nextEvent("comment")
        #expect(JSON.int(commentEvent["post"]) == postID && JSON.int(commentEvent["comments"]) == 1)
        #expect(JSON.text(commentEvent["comment"] as Any) == JSON.text(comment))
        _ = try alice.nextEvent("comment")
        try expectFeed(of: bobAgain, showsOnly: postID, liked: false, comment: comment)
        try expectFeed(of: alice, showsOnly: postID, liked: true, comment: comment)
        #expect(receiver.requests.count == 3, "nothing of the feed is pushed to users online")

        // 11. Restart on the same data: everything is still there, and nothing is pushed again.
        #expect(try await server.stop() == 0)
        server = try await startScenarioServer(webhook: receiver.url, dataDirectory: data)
        try await server.waitForLog("push gateway enabled")
        try await Task.sleep(for: .milliseconds(500))
        #expect(receiver.requests.count == 3, "replaying the log repeats no hand-off")
        #expect(try PrometheusText.fetch(port: server.port).value("huddle_push_sent_total", [:]) == 0)

        let bobAfter = try ProtocolClient.authenticated(bobToken, port: server.port)
        let aliceAfter = try ProtocolClient.authenticated(aliceToken, port: server.port)
        let friends = try #require(try bobAfter.ok("friends")["friends"] as? [JSONObject])
        #expect(friends.map { $0["username"] as? String } == ["alice"])
        let inbox = try #require(try bobAfter.ok("history", ["channel": "inbox:bob"])["publications"] as? [JSONObject])
        #expect(inbox.map { $0["type"] as? String } == ["friend_accepted", "friend_request"])
        let history = try #require(try bobAfter.ok("history", ["channel": Self.room])["publications"] as? [JSONObject])
        #expect(history.map { ($0["data"] as? JSONObject)?["text"] as? String } == texts.reversed())
        let unreadAfter = try bobAfter.ok("unread")
        #expect(JSON.int(unreadAfter["total"]) == 0)
        #expect((unreadAfter["rooms"] as? [JSONObject])?.map { JSON.int($0["read"]) } == [3])
        let resent = try aliceAfter.ok("publish", ["channel": Self.room, "data": ["text": texts[2]], "client_id": "m-3"])
        #expect(JSON.int(resent["offset"]) == 3 && JSON.bool(resent["duplicate"]) == true)
        try expectFeed(of: bobAfter, showsOnly: postID, liked: false, comment: comment)
        try expectFeed(of: aliceAfter, showsOnly: postID, liked: true, comment: comment)
        #expect(try aliceAfter.errorCode("like", ["post": postID, "liked": true]) == "already_liked")
        try await Task.sleep(for: .milliseconds(300))
        #expect(receiver.requests.count == 3)
        #expect(try await server.stop() == 0)
    }

    // MARK: Steps

    /// A server pushing to `webhook`, with no presence grace, so a friend's `presence` offline
    /// event tells the test the server has seen the other side's socket go.
    private func startScenarioServer(webhook: String, dataDirectory: URL) async throws -> ServerProcess {
        try await startHuddle(["--presence-grace", "0", "--push-webhook", webhook], dataDirectory: dataDirectory)
    }

    /// The next event on `client` must be a notice of `type` on `user`'s inbox; returns its data.
    private func inboxNotice(_ client: ProtocolClient, _ user: String, _ type: String) throws -> JSONObject {
        let event = try client.nextEvent("publication")
        guard event["channel"] as? String == "inbox:\(user)", event["type"] as? String == type, JSON.isNull(event["from"]),
              let data = event["data"] as? JSONObject
        else { throw TestFailure("expected a \(type) notice on inbox:\(user), got \(JSON.text(event))") }
        return data
    }

    /// The next event on `friend` must say that `user` came online or went offline.
    private func expectPresence(of user: String, online: Bool, toldTo friend: ProtocolClient) throws {
        let event = try friend.nextEvent("presence")
        guard event["user"] as? String == user, JSON.bool(event["online"]) == online else {
            throw TestFailure("expected \(user) to be \(online ? "online" : "offline"), got \(JSON.text(event))")
        }
    }

    /// The feed holds the one post, liked once (by the caller or not), with the one comment inline.
    private func expectFeed(
        of client: ProtocolClient, showsOnly postID: Int, liked: Bool, comment: JSONObject, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let posts = try #require(try client.ok("feed")["posts"] as? [JSONObject], sourceLocation: sourceLocation)
        #expect(posts.map { JSON.int($0["id"]) } == [postID], sourceLocation: sourceLocation)
        guard let post = posts.first else { return }
        #expect(post["author"] as? String == "bob" && post["text"] as? String == "gym at 6?", sourceLocation: sourceLocation)
        #expect(JSON.int(post["likes"]) == 1 && JSON.bool(post["liked"]) == liked, sourceLocation: sourceLocation)
        #expect(JSON.int(post["comments"]) == 1, sourceLocation: sourceLocation)
        #expect(JSON.text(post["recent_comments"] as Any) == JSON.text([comment]), sourceLocation: sourceLocation)
    }
}
