import Foundation
@testable import HuddleCore
import HuddleProtocol
import Testing

@Suite struct FeedTests {
    /// alice and bob are friends; carol is nobody's friend.
    private func setUp() -> (CoreHarness, alice: ConnectionRef, bob: ConnectionRef, carol: ConnectionRef) {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let (carol, _) = harness.signUp("carol")
        harness.makeFriends("alice", "bob")
        return (harness, alice, bob, carol)
    }

    /// Posts as the connection's user; returns the new post's id.
    @discardableResult
    private func post(
        _ harness: CoreHarness, _ connection: ConnectionRef, _ text: String, activity: String? = nil, at: Int64? = nil
    ) -> UInt64 {
        let step = harness.handle(.createPost(connection, requestID: "p", text: text, activity: activity, at: at))
        guard case .feedPost(let post)? = step.replies.first else {
            Issue.record("post failed: \(step.outputs)")
            return 0
        }
        harness.advance(10)
        return post.id
    }

    private func feed(_ harness: CoreHarness, _ connection: ConnectionRef, before: UInt64? = nil, limit: Int = 10) -> (posts: [FeedPost], nextBefore: UInt64?)? {
        let step = harness.handle(.listFeed(connection, requestID: "f", before: before, limit: limit))
        guard case .feedPage(let posts, let nextBefore)? = step.replies.first else { return nil }
        return (posts, nextBefore)
    }

    private func like(_ harness: CoreHarness, _ connection: ConnectionRef, _ post: UInt64, _ liked: Bool? = nil) -> CoreStep {
        harness.handle(.likePost(connection, requestID: "l", post: post, liked: liked))
    }

    private func comment(_ harness: CoreHarness, _ connection: ConnectionRef, _ post: UInt64, _ text: String) -> CoreStep {
        harness.handle(.commentOnPost(connection, requestID: "c", post: post, text: text))
    }

    private func comments(_ harness: CoreHarness, _ connection: ConnectionRef, _ post: UInt64, before: UInt64? = nil, limit: Int = 10)
        -> (comments: [FeedComment], nextBefore: UInt64?)?
    {
        let step = harness.handle(.listComments(connection, requestID: "cs", post: post, before: before, limit: limit))
        guard case .postComments(post, let comments, let nextBefore)? = step.replies.first else { return nil }
        return (comments, nextBefore)
    }

    @Test func aPostIsSeenByItsAuthorAndTheAuthorsFriendsOnly() {
        let (harness, alice, bob, carol) = setUp()
        let time = harness.time
        let step = harness.handle(.createPost(alice, requestID: "p", text: "coffee anyone?", activity: "Coffee", at: time + 3_600_000))
        let expected = FeedPost(
            id: 1, author: "alice", text: "coffee anyone?", activity: "Coffee", at: time + 3_600_000, time: time, likes: 0,
            liked: false, comments: 0, recentComments: [])
        #expect(step.commands == [.createPost(id: 1, author: "alice", text: "coffee anyone?", activity: "Coffee", at: time + 3_600_000, time: time)])
        #expect(step.replies == [.feedPost(expected)])
        #expect(feed(harness, alice)?.posts == [expected])
        #expect(feed(harness, bob)?.posts == [expected])
        #expect(feed(harness, carol)?.posts == [])

        // A stranger cannot tell the post from one that does not exist.
        for request in [
            CoreRequest.likePost(carol, requestID: "x", post: 1, liked: nil),
            .commentOnPost(carol, requestID: "x", post: 1, text: "hi"),
            .listComments(carol, requestID: "x", post: 1, before: nil, limit: 10),
            .deletePost(carol, requestID: "x", post: 1),
            .likePost(bob, requestID: "x", post: 99, liked: nil),
        ] {
            let refused = harness.handle(request)
            #expect(refused.errorCode == .postNotFound && refused.commands.isEmpty)
        }
        #expect(like(harness, carol, 1).error?.message == like(harness, carol, 99).error?.message.replacingOccurrences(of: "99", with: "1"))

        // Visibility follows the friendship as it is now.
        harness.handle(.removeFriend(bob, requestID: "r", user: "alice"))
        #expect(feed(harness, bob)?.posts == [])
        #expect(like(harness, bob, 1).errorCode == .postNotFound)
        harness.makeFriends("carol", "alice")
        #expect(feed(harness, carol)?.posts.map(\.id) == [1])
        #expect(harness.handle(.createPost(harness.connect(), requestID: "p", text: "x", activity: nil, at: nil)).errorCode == .notAuthenticated)
    }

    @Test func theFeedMergesFriendsNewestFirstAndPagesToTheEndAndPast() {
        let (harness, alice, bob, carol) = setUp()
        let (dave, _) = harness.signUp("dave")
        harness.makeFriends("alice", "dave")
        // carol is no friend of alice: her posts never show in alice's feed.
        var visible: [UInt64] = []
        for round in 0..<4 {
            visible.append(post(harness, alice, "a\(round)"))
            post(harness, carol, "c\(round)")
            visible.append(post(harness, bob, "b\(round)"))
            if round % 2 == 0 { visible.append(post(harness, dave, "d\(round)")) }
        }
        let newestFirst = Array(visible.reversed())
        var pages: [[UInt64]] = []
        var before: UInt64?
        repeat {
            guard let page = feed(harness, alice, before: before, limit: 3) else {
                Issue.record("feed failed")
                return
            }
            pages.append(page.posts.map(\.id))
            before = page.nextBefore
            #expect(before == nil || before == page.posts.last?.id)
        } while before != nil
        #expect(pages.flatMap { $0 } == newestFirst)
        #expect(pages.map(\.count) == [3, 3, 3, 1])
        // The default page, a cursor past the end, and a cursor beyond the newest post.
        #expect(feed(harness, alice)?.posts.map(\.id) == Array(newestFirst.prefix(10)))
        let past = feed(harness, alice, before: visible.min()!)
        #expect(past?.posts == [] && past?.nextBefore == nil)
        #expect(feed(harness, alice, before: 1_000_000, limit: 2)?.posts.map(\.id) == Array(newestFirst.prefix(2)))
        // Exactly one page's worth: no next page.
        let exact = feed(harness, alice, before: newestFirst[newestFirst.count - 3], limit: 2)
        #expect(exact?.posts.map(\.id) == Array(newestFirst.suffix(2)) && exact?.nextBefore == nil)
        // Page sizes are clamped to 1…50.
        #expect(feed(harness, alice, limit: 0)?.posts.count == 1)
        #expect(feed(harness, alice, limit: 500)?.posts.count == visible.count)
        // bob sees his own and alice's, not dave's (not his friend).
        #expect(feed(harness, bob, limit: 50)?.posts.allSatisfy { $0.author == "alice" || $0.author == "bob" } == true)
    }

    @Test func aLikeTogglesSetsAndCountsOnceEver() {
        let (harness, alice, bob, _) = setUp()
        let id = post(harness, alice, "look")
        let time = harness.time
        let first = like(harness, bob, id)
        #expect(first.commands == [.setLike(post: id, user: "bob", liked: true, time: time)])
        #expect(first.replies == [.postLike(post: id, liked: true, likes: 1)])
        #expect(like(harness, bob, id).replies == [.postLike(post: id, liked: false, likes: 0)], "a second like undoes it")
        #expect(like(harness, bob, id, true).replies == [.postLike(post: id, liked: true, likes: 1)])
        let double = like(harness, bob, id, true)
        #expect(double.errorCode == .alreadyLiked && double.commands.isEmpty && double.outputs.count == 1)
        #expect(like(harness, alice, id, true).replies == [.postLike(post: id, liked: true, likes: 2)], "authors may like their own")
        #expect(feed(harness, bob)?.posts.first.map { "\($0.likes) \($0.liked)" } == "2 true")
        #expect(like(harness, bob, id, false).replies == [.postLike(post: id, liked: false, likes: 1)])
        let notLiked = like(harness, bob, id, false)
        #expect(notLiked.errorCode == .notLiked && notLiked.commands.isEmpty)
        #expect(feed(harness, bob)?.posts.first.map { "\($0.likes) \($0.liked)" } == "1 false")
        #expect(feed(harness, alice)?.posts.first.map { "\($0.likes) \($0.liked)" } == "1 true")
    }

    @Test func commentsShowTheNewestFiveInlineAndPageTheRest() {
        let (harness, alice, bob, _) = setUp()
        let id = post(harness, alice, "thoughts?")
        for index in 1...12 {
            let step = comment(harness, index % 2 == 0 ? alice : bob, id, "c\(index)")
            guard case .postComment(id, let made, index)? = step.replies.first else {
                Issue.record("comment \(index): \(step.outputs)")
                return
            }
            #expect(made.id == UInt64(index) && made.text == "c\(index)" && made.author == (index % 2 == 0 ? "alice" : "bob"))
            harness.advance(5)
        }
        let shown = feed(harness, bob)?.posts.first
        #expect(shown?.comments == 12)
        #expect(shown?.recentComments.map(\.id) == [12, 11, 10, 9, 8])
        let page1 = comments(harness, bob, id)
        #expect(page1?.comments.map(\.id) == Array((3...12).reversed()) && page1?.nextBefore == 3)
        let page2 = comments(harness, bob, id, before: 3)
        #expect(page2?.comments.map(\.id) == [2, 1] && page2?.nextBefore == nil)
        let past = comments(harness, bob, id, before: 1)
        #expect(past?.comments == [] && past?.nextBefore == nil)
        #expect(comments(harness, bob, id, before: 100, limit: 2)?.comments.map(\.id) == [12, 11])
        #expect(comments(harness, bob, id, limit: 0)?.comments.count == 1)
    }

    @Test func onlyTheAuthorDeletesAPostAndItIsGoneForEveryone() {
        let (harness, alice, bob, _) = setUp()
        let id = post(harness, alice, "oops")
        _ = like(harness, bob, id)
        _ = comment(harness, bob, id, "ha")
        let refused = harness.handle(.deletePost(bob, requestID: "d", post: id))
        #expect(refused.errorCode == .forbidden && refused.commands.isEmpty)
        let deleted = harness.handle(.deletePost(alice, requestID: "d", post: id))
        #expect(deleted.commands == [.deletePost(post: id, author: "alice", time: harness.time)])
        #expect(deleted.replies == [.done])
        #expect(harness.core.durableState.feed[id] == nil && harness.core.durableState.feed.postIDs(of: "alice").isEmpty)
        #expect(feed(harness, bob)?.posts == [])
        #expect(harness.handle(.deletePost(alice, requestID: "d", post: id)).errorCode == .postNotFound)
        #expect(like(harness, bob, id).errorCode == .postNotFound)
        // Ids are never reused.
        #expect(post(harness, alice, "again") == id + 1)
    }

    @Test func liveEventsReachTheAuthorAndTheAuthorsFriendsOnly() {
        let (harness, alice, bob, carol) = setUp()
        let alicesPhone = harness.connectSignedIn(with: NewSession(tokenHash: CoreHarness.tokenHash(1), expiresAt: .max))
        let (dave, _) = harness.signUp("dave")
        harness.makeFriends("bob", "dave")  // a friend of a friend sees nothing of alice's
        let viewers = [alice, alicesPhone, bob].sorted()

        let time = harness.time
        let posted = harness.handle(.createPost(alice, requestID: "p", text: "hi", activity: nil, at: nil))
        let view = FeedPost(id: 1, author: "alice", text: "hi", activity: nil, at: nil, time: time, likes: 0, liked: false, comments: 0, recentComments: [])
        #expect(posted.outputs == [.reply(alice, requestID: "p", .feedPost(view)), .feedEvent(.posted(view), to: viewers)])

        let liked = like(harness, bob, 1)
        #expect(liked.outputs.last == .feedEvent(.liked(post: 1, author: "alice", user: "bob", liked: true, likes: 1, time: time), to: viewers))
        let unliked = like(harness, bob, 1)
        #expect(unliked.outputs.last == .feedEvent(.liked(post: 1, author: "alice", user: "bob", liked: false, likes: 0, time: time), to: viewers))

        let commented = comment(harness, bob, 1, "nice")
        let made = FeedComment(id: 1, author: "bob", text: "nice", time: time)
        #expect(commented.outputs.last == .feedEvent(.commented(post: 1, author: "alice", comment: made, comments: 1), to: viewers))

        let deleted = harness.handle(.deletePost(alice, requestID: "d", post: 1))
        #expect(deleted.outputs.last == .feedEvent(.deleted(post: 1, author: "alice", time: time), to: viewers))

        for step in [posted, liked, unliked, commented, deleted] {
            for case .feedEvent(_, let recipients) in step.outputs {
                #expect(!recipients.contains(carol) && !recipients.contains(dave))
            }
        }
        // Without friends, the poster's own connection is the only viewer.
        let (erin, _) = harness.signUp("erin")
        let alone = harness.handle(.createPost(erin, requestID: "p", text: "anyone?", activity: nil, at: nil))
        guard case .feedEvent(.posted(let erinsPost), [erin])? = alone.outputs.last else {
            Issue.record("\(alone.outputs)")
            return
        }
        #expect(erinsPost.author == "erin")
    }

    @Test func postsAndCommentsAreBounded() {
        let (harness, alice, bob, _) = setUp()
        let first = post(harness, alice, "first")
        _ = like(harness, bob, first)
        for index in 2...Feed.maxPostsPerAuthor { post(harness, alice, "post \(index)") }
        #expect(harness.core.durableState.feed.postIDs(of: "alice").count == Feed.maxPostsPerAuthor)
        #expect(harness.core.durableState.feed[first] != nil)
        let newest = post(harness, alice, "one too many")
        let feedState = harness.core.durableState.feed
        #expect(feedState.postIDs(of: "alice").count == Feed.maxPostsPerAuthor)
        #expect(feedState.postIDs(of: "alice").first == first + 1 && feedState.postIDs(of: "alice").last == newest)
        #expect(feedState[first] == nil && feedState.postCount == Feed.maxPostsPerAuthor)
        #expect(like(harness, bob, first).errorCode == .postNotFound, "the oldest went with its likes")
        // bob's own posts are bounded separately.
        #expect(post(harness, bob, "mine") == newest + 1)

        for index in 1...Feed.maxCommentsPerPost + 1 { _ = comment(harness, bob, newest, "c\(index)") }
        let kept = harness.core.durableState.feed[newest]!
        #expect(kept.comments.count == Feed.maxCommentsPerPost)
        #expect(kept.comments.first?.id == 2 && kept.lastCommentID == UInt64(Feed.maxCommentsPerPost + 1))
        guard case .postComment(_, let next, let count)? = comment(harness, bob, newest, "more").replies.first else {
            Issue.record("comment failed")
            return
        }
        #expect(next.id == UInt64(Feed.maxCommentsPerPost + 2) && count == Feed.maxCommentsPerPost)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    /// Every feed command, replayed on a fresh core and through a snapshot, gives an equal
    /// state; the counters carry on after a restore.
    @Test func theFeedReplaysAndSurvivesASnapshot() throws {
        let (harness, alice, bob, carol) = setUp()
        let first = post(harness, alice, "one", activity: "Gym", at: harness.time + 1_000)
        let second = post(harness, bob, "two \"quoted\" ☕")
        let third = post(harness, carol, "three")
        for connection in [alice, bob] { _ = like(harness, connection, first) }
        _ = like(harness, bob, first)
        _ = like(harness, alice, second, true)
        _ = comment(harness, bob, first, "yes")
        _ = comment(harness, alice, first, "see you")
        harness.handle(.deletePost(carol, requestID: "d", post: third))
        let kinds = Set(harness.log.map { command -> String in
            switch command {
            case .createPost: "createPost"
            case .setLike(_, _, let liked, _): liked ? "like" : "unlike"
            case .addComment: "addComment"
            case .deletePost: "deletePost"
            default: "other"
            }
        })
        #expect(kinds == ["createPost", "like", "unlike", "addComment", "deletePost", "other"])

        #expect(harness.replayed().durableState == harness.core.durableState)
        let decoded = try RecordCoding.roundTrip(harness.core.durableState)
        #expect(decoded == harness.core.durableState)
        #expect(decoded.feed[first]?.likers == ["alice"] && decoded.feed[first]?.comments.map(\.text) == ["yes", "see you"])
        #expect(decoded.feed[first]?.activity == "Gym" && decoded.feed[second]?.activity == nil)

        let restored = CoreHarness(core: HuddleCore(restoring: decoded))
        let again = restored.connectSignedIn(with: NewSession(tokenHash: CoreHarness.tokenHash(1), expiresAt: .max))
        #expect(post(restored, again, "after") == third + 1)
        guard case .postComment(_, let next, _)? = comment(restored, again, first, "more").replies.first else {
            Issue.record("comment after restore failed")
            return
        }
        #expect(next.id == 3)
    }

    /// Equal feeds encode to equal bytes whatever order filled their sets and dictionaries.
    @Test func equalFeedsEncodeToEqualBytes() throws {
        func build(_ likers: [String]) -> CoreDurableState {
            let core = HuddleCore()
            for id in 1...20 { core.apply(.createPost(id: UInt64(id), author: "u\(id % 3)", text: "t\(id)", activity: nil, at: nil, time: 1)) }
            for id in 1...20 {
                for liker in likers { core.apply(.setLike(post: UInt64(id), user: liker, liked: true, time: 2)) }
            }
            return core.durableState
        }
        let names = (0..<50).map { "user\($0)" }
        #expect(RecordCoding.json(build(names).feed) == RecordCoding.json(build(names.reversed()).feed))
    }

    @Test func snapshotsWithoutAFeedLoadAndCorruptFeedsAreRefused() throws {
        let channels = #""channels":{"createdCount":0,"channels":[]}"#
        let old = #"{"accounts":[],"sessions":[],\#(channels)}"#
        #expect(try RecordCoding.state(old).feed == Feed())
        func state(_ feed: String) throws -> CoreDurableState { try RecordCoding.state(#"{"accounts":[],"sessions":[],\#(channels),"feed":\#(feed)}"#) }
        func post(_ id: Int, likers: String = "[]", comments: String = "[]", last: Int = 0) -> String {
            #"{"id":\#(id),"author":"alice","text":"t","time":1,"likers":\#(likers),"comments":\#(comments),"lastCommentID":\#(last)}"#
        }
        let valid = #"{"lastPostID":2,"posts":[\#(post(1)),\#(post(2, likers: #"["bob"]"#))]}"#
        #expect(try state(valid).feed.postIDs(of: "alice") == [1, 2])
        let comment = { (id: Int) in #"{"id":\#(id),"author":"bob","text":"c","time":1}"# }
        for corrupt in [
            #"{"lastPostID":2,"posts":[\#(post(1)),\#(post(1))]}"#,
            #"{"lastPostID":1,"posts":[\#(post(2))]}"#,
            #"{"lastPostID":1,"posts":[\#(post(0))]}"#,
            #"{"lastPostID":1,"posts":[\#(post(1, likers: #"["bob","bob"]"#))]}"#,
            #"{"lastPostID":1,"posts":[\#(post(1, comments: "[\(comment(2)),\(comment(1))]", last: 2))]}"#,
            #"{"lastPostID":1,"posts":[\#(post(1, comments: "[\(comment(3))]", last: 2))]}"#,
        ] {
            #expect(throws: RecordDecodingError.self) { try state(corrupt) }
        }
    }

    /// The log stores these names: renaming a case or label breaks every existing log.
    @Test func theLoggedFeedCommandsKeepTheirFieldNames() throws {
        let expectations: [(CoreCommand, String)] = [
            (.createPost(id: 1, author: "alice", text: "hi", activity: "Gym", at: 5, time: 2),
             #"{"createPost":{"activity":"Gym","at":5,"author":"alice","id":1,"text":"hi","time":2}}"#),
            (.createPost(id: 2, author: "alice", text: "hi", activity: nil, at: nil, time: 3),
             #"{"createPost":{"author":"alice","id":2,"text":"hi","time":3}}"#),
            (.setLike(post: 1, user: "bob", liked: true, time: 4), #"{"setLike":{"liked":true,"post":1,"time":4,"user":"bob"}}"#),
            (.addComment(post: 1, id: 3, author: "bob", text: "c", time: 5), #"{"addComment":{"author":"bob","id":3,"post":1,"text":"c","time":5}}"#),
            (.deletePost(post: 1, author: "alice", time: 6), #"{"deletePost":{"author":"alice","post":1,"time":6}}"#),
        ]
        for (command, json) in expectations {
            #expect(RecordCoding.json(command) == json)
            #expect(try RecordCoding.command(json) == command)
        }
    }
}

@Suite struct NewestFirstMergeTests {
    @Test func mergesDescendingBelowTheBoundAndStopsAtTheCount() {
        let lists: [[UInt64]] = [[1, 4, 9], [2, 3, 10, 11], [], [5]]
        #expect(NewestFirstMerge.ids(of: lists, below: nil, count: 100) == [11, 10, 9, 5, 4, 3, 2, 1])
        #expect(NewestFirstMerge.ids(of: lists, below: 10, count: 3) == [9, 5, 4])
        #expect(NewestFirstMerge.ids(of: lists, below: 1, count: 3) == [])
        #expect(NewestFirstMerge.ids(of: lists.reversed(), below: 6, count: 4) == [5, 4, 3, 2])
        #expect(NewestFirstMerge.ids(of: [], below: nil, count: 3) == [])
    }
}
