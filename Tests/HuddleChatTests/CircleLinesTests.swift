import HuddleClient
import HuddleProtocol
import Testing
@testable import huddle_chat

/// huddle-chat's lines for the feed, matches and places, its reading of command words, and
/// which posts it shows after a reconnect.
@Suite struct CircleLinesTests {
    static let post = FeedPost(id: 12, author: "alice", text: "gym\u{1B}[2J at 6?", activity: "Gym", time: 1)

    @Test func feedEventsAreWordedForTheReader() {
        #expect(ChatLines.feedEvent(.posted(Self.post), me: "bob") == "[post 12] alice: gym\u{FFFD}[2J at 6? (Gym)")
        #expect(ChatLines.feedEvent(.liked(post: 12, author: "alice", user: "bob", liked: true, likes: 1, time: 2), me: "alice")
            == "[like] bob likes your post 12 (1 like)")
        #expect(ChatLines.feedEvent(.liked(post: 12, author: "alice", user: "bob", liked: false, likes: 0, time: 2), me: "bob")
            == "[like] you no longer like alice's post 12 (0 likes)")
        let comment = FeedComment(id: 3, author: "carol", text: "in", time: 3)
        #expect(ChatLines.feedEvent(.commented(post: 12, author: "alice", comment: comment, comments: 3), me: "bob")
            == "[comment 12 #3] carol on alice's post: in")
        #expect(ChatLines.feedEvent(.deleted(post: 12, author: "alice", time: 4), me: "alice") == "[post 12] you deleted it")
        var listed = Self.post
        listed.text = "gym at 6?"
        listed.likes = 2
        listed.liked = true
        listed.comments = 1
        #expect(ChatLines.feedEntry(listed) == "[feed 12] alice: gym at 6? (Gym) — 2 likes (you too), 1 comment")
    }

    @Test func matchesAndPlaces() {
        #expect(ChatLines.notice(.match(user: "bob", activity: "Coffee"), me: "alice") == "[match] bob is up for Coffee too")
        #expect(ChatLines.notice(.matchEnded(user: "bob", activity: "Coffee", reason: .expired), me: "alice")
            == "[match-ended] Coffee with bob is over (it expired)")
        let since = ChatClock.nowMilliseconds()
        let clock = ChatClock.time(since)
        #expect(clock.count == 5 && clock.dropFirst(2).first == ":", "today: the time only")
        #expect(ChatClock.time(since - 3 * 86_400_000).count == 16, "another day: the date too")
        #expect(ChatLines.whereabouts(Whereabouts(user: "bob", place: "work", placeID: 2, since: since), me: "alice") == "bob is at work (since \(clock))")
        #expect(ChatLines.whereabouts(Whereabouts(user: "bob", place: "traveling", since: since), me: "alice") == "bob is traveling (since \(clock))")
        #expect(ChatLines.whereabouts(Whereabouts(user: "alice", place: "unknown", since: since), me: "alice")
            == "you are away from your places (since \(clock))")
        #expect(ChatLines.whereabouts(Whereabouts(user: "bob", place: "unknown", since: nil), me: "alice") == "bob has not reported a place yet")
        #expect(ChatLines.placeDecision(PlaceDecision(place: "home", placeID: 1, since: since, changed: false, ignored: false))
            == "[ok] you are still at home (since \(clock))")
        #expect(ChatLines.place(Place(id: 1, label: "home", latitude: 48.8566, longitude: 2.3522, radius: 100)) == "1 home (48.8566, 2.3522, r 100 m)")
    }

    @Test func commandWords() {
        #expect(CommandArguments.id("12") == 12 && CommandArguments.id("0") == nil && CommandArguments.id("-1") == nil && CommandArguments.id("x") == nil)
        #expect(CommandArguments.number("48.85") == 48.85 && CommandArguments.number("nan") == nil && CommandArguments.number("1e999") == nil)
        #expect(CommandArguments.duration("90s") == 90 && CommandArguments.duration("30m") == 1800 && CommandArguments.duration("2h") == 7200)
        #expect(CommandArguments.duration("m") == nil && CommandArguments.duration("0m") == nil && CommandArguments.duration("5d") == nil)
        #expect(CommandArguments.activityOptions(nil)! == (nil, nil))
        #expect(CommandArguments.activityOptions("for Bob,carol")! == (["bob", "carol"], nil))
        #expect(CommandArguments.activityOptions("for 30m for bob")! == (["bob"], 1800))
        for bad in ["for", "bob", "for bob for carol", "for 30m for 1h", "for bob,,carol", "with bob"] {
            #expect(CommandArguments.activityOptions(bad) == nil, "\(bad)")
        }
        let on = CommandTable.command(named: "on")!
        #expect(on.usage == "/on ACTIVITY [for USER,USER] [for 30m]")
        let post = CommandTable.command(named: "post")!
        #expect(post.usage == "/post TEXT" && post.parse("") == nil && post.parse("  hi there ") == ["hi there"])
    }

    @Test func afterAReconnectThePostsThatCameMeanwhileShowOnce() {
        func page(_ ids: [UInt64], more: Bool = false) -> FeedPage {
            FeedPage(posts: ids.map { FeedPost(id: $0, author: "a", text: "\($0)", time: 0) }, nextBefore: more ? ids.last : nil)
        }
        var catchUp = FeedCatchUp()
        let early = catchUp.begin()
        #expect(!early, "not before the session's first look at the feed")
        catchUp.baseline(5)
        catchUp.saw(6)
        let first = catchUp.begin(), second = catchUp.begin()
        #expect(first && !second, "one at a time")
        catchUp.saw(9)  // arrived live while the catch-up was on its way
        let (missed, more) = catchUp.finish(page([9, 8, 7, 6, 5]))
        #expect(missed.map(\.id) == [7, 8] && !more, "oldest first, none shown twice")
        #expect(catchUp.newest == 9)
        let again = catchUp.begin()
        let full = catchUp.finish(page([19, 18], more: true))
        #expect(again && full.more, "a full page of new ones: there may be more")

        var empty = FeedCatchUp()
        empty.baseline(nil)
        let began = empty.begin()
        let news = empty.finish(page([2, 1]))
        #expect(began && news.missed.map(\.id) == [1, 2], "an empty feed at the start: everything is new")
    }
}
