import ChildProcessExit
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient's typed feed calls and events (protocol.md, "Feed") against the real server,
/// and what a reconnect means for them: live only, so `connected` says `resumed` and the feed
/// is read again.
@Suite(.ownThread) struct ClientSessionFeedTests {
    @Test func postsLikesCommentsAndDeletionsAsCallsAndEvents() async throws {
        let server = try await startHuddle()
        let alice = try await ClientHarness.signedUp("alice", url: server.url)
        let bob = try await ClientHarness.signedUp("bob", url: server.url)
        let carol = try await ClientHarness.signedUp("carol", url: server.url)
        try await alice.befriend("alice", bob, "bob")

        let first = try await alice.ok("post") { $0.post(text: "gym at 6?", activity: "Gym", at: 1_763_715_600_000, completion: $1) }
        #expect(first.author == "alice" && first.text == "gym at 6?" && first.activity == "Gym" && first.at == 1_763_715_600_000)
        #expect(first.likes == 0 && !first.liked && first.comments == 0 && first.recentComments.isEmpty && first.time > 0)
        try await bob.waitFor("the post event") { _ in !bob.feedEvents.isEmpty }
        #expect(bob.feedEvents == [.posted(first)])
        #expect(bob.feedEvents.first?.post == first.id)
        try await alice.waitFor("the author's own post event") { _ in alice.feedEvents == [.posted(first)] }

        // Likes: a set, the same set again (refused), a toggle back.
        let liked = try await bob.ok("like") { $0.like(post: first.id, liked: true, completion: $1) }
        #expect(liked == PostLike(post: first.id, liked: true, likes: 1))
        #expect(try await bob.failure { $0.like(post: first.id, liked: true, completion: $1) }.serverCode == "already_liked")
        let toggled = try await bob.ok("toggle") { $0.like(post: first.id, completion: $1) }
        #expect(toggled == PostLike(post: first.id, liked: false, likes: 0))
        #expect(try await bob.failure { $0.like(post: first.id, liked: false, completion: $1) }.serverCode == "not_liked")
        _ = try await bob.ok("like again") { $0.like(post: first.id, liked: true, completion: $1) }

        // Comments, and their page.
        let said = try await bob.ok("comment") { $0.comment(on: first.id, text: "in", completion: $1) }
        #expect(said.post == first.id && said.comments == 1 && said.comment.id == 1 && said.comment.author == "bob" && said.comment.text == "in")
        _ = try await alice.ok("comment") { $0.comment(on: first.id, text: "see you", completion: $1) }
        let page = try await alice.ok("comments") { $0.comments(on: first.id, limit: 1, completion: $1) }
        #expect(page.post == first.id && page.comments.map(\.text) == ["see you"] && page.nextBefore == 2)
        let older = try await alice.ok("older comments") { $0.comments(on: first.id, before: page.nextBefore, completion: $1) }
        #expect(older.comments == [said.comment] && older.nextBefore == nil)

        let expectedByAlice: [FeedEvent] = [
            .posted(first),
            .liked(post: first.id, author: "alice", user: "bob", liked: true, likes: 1, time: 0),
            .liked(post: first.id, author: "alice", user: "bob", liked: false, likes: 0, time: 0),
            .liked(post: first.id, author: "alice", user: "bob", liked: true, likes: 1, time: 0),
            .commented(post: first.id, author: "alice", comment: said.comment, comments: 1),
        ]
        try await alice.waitFor("the likes and the comments") { _ in alice.feedEvents.count >= expectedByAlice.count + 1 }
        #expect(Array(alice.feedEvents.prefix(expectedByAlice.count)).map(Self.withoutTime) == expectedByAlice)

        // The feed pages newest first; strangers see none of it.
        var posts = [first]
        for text in ["two", "three"] { posts.append(try await alice.ok("post") { $0.post(text: text, completion: $1) }) }
        let top = try await bob.ok("feed") { $0.feed(limit: 2, completion: $1) }
        #expect(top.posts.map(\.id) == [posts[2].id, posts[1].id] && top.nextBefore == posts[1].id)
        #expect(top.posts[0].activity == nil && top.posts[0].at == nil)
        let rest = try await bob.ok("feed more") { $0.feed(before: top.nextBefore, completion: $1) }
        #expect(rest.posts.map(\.id) == [first.id] && rest.nextBefore == nil)
        #expect(rest.posts[0].liked && rest.posts[0].likes == 1 && rest.posts[0].comments == 2)
        #expect(rest.posts[0].recentComments.map(\.text) == ["see you", "in"])
        #expect(try await carol.ok("stranger's feed") { $0.feed(completion: $1) } == FeedPage(posts: [], nextBefore: nil))
        #expect(try await carol.failure { $0.like(post: first.id, completion: $1) }.serverCode == "post_not_found")
        #expect(try await carol.failure { $0.comment(on: first.id, text: "hi", completion: $1) }.serverCode == "post_not_found")
        #expect(try await bob.failure { $0.post(text: "", completion: $1) }.serverCode == "bad_request")

        // Only the author deletes; the viewers are told.
        #expect(try await bob.failure { $0.deletePost(first.id, completion: $1) }.serverCode == "forbidden")
        try await alice.ok("delete") { $0.deletePost(first.id, completion: $1) }
        try await bob.waitFor("the deletion") { _ in bob.feedEvents.last == .deleted(post: first.id, author: "alice", time: bob.feedEvents.last?.time ?? 0) }
        #expect(try await bob.failure { $0.comments(on: first.id, completion: $1) }.serverCode == "post_not_found")
        #expect(carol.feedEvents.isEmpty, "nobody else learns anything")
    }

    /// Feed events sent while a client is disconnected are lost: the connection that comes
    /// back says `resumed`, and `feed` has what was missed.
    @Test func aReconnectSaysResumedAndTheFeedHasWhatWasMissed() async throws {
        let server = try await startHuddle()
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let alice = try await ClientHarness.signedUp("alice", url: server.url)
        let bob = try await ClientHarness.signedUp("bob", url: proxy.url)
        try await alice.befriend("alice", bob, "bob")
        #expect(bob.connections == [false], "signing up is not a resume")

        proxy.setRefusing(true)
        proxy.cutAll(reset: true)
        try await bob.waitFor("the drop") { $0.contains { $0.isReconnecting } }
        let missed = try await alice.ok("post while bob is away") { $0.post(text: "while you were away", completion: $1) }
        proxy.setRefusing(false)
        try await bob.waitFor("the resumed connection") { _ in bob.connections == [false, true] }
        #expect(!bob.feedEvents.contains(.posted(missed)), "live only: not replayed")
        let feed = try await bob.ok("feed") { $0.feed(completion: $1) }
        #expect(feed.posts.map(\.id) == [missed.id])

        // A new sign-in as someone else on the same client is not a resume.
        try await bob.ok("logout") { $0.logOut(completion: $1) }
        try await bob.waitFor("the anonymous connection") { _ in bob.connections.count == 3 }
        _ = try await bob.ok("login") { $0.logIn(login: "alice", password: testPassword, completion: $1) }
        #expect(bob.connections == [false, true, false])
    }

    /// A like event with its time zeroed, to compare the rest.
    private static func withoutTime(_ event: FeedEvent) -> FeedEvent {
        if case .liked(let post, let author, let user, let liked, let likes, _) = event {
            return .liked(post: post, author: author, user: user, liked: liked, likes: likes, time: 0)
        }
        return event
    }
}

extension FeedEvent {
    /// When it happened, for the kinds that carry their own time.
    var time: Int64? {
        switch self {
        case .liked(_, _, _, _, _, let time), .deleted(_, _, let time), .commentRemoved(_, _, _, _, let time): return time
        case .posted(let post): return post.time
        case .commented(_, _, let comment, _): return comment.time
        }
    }
}
