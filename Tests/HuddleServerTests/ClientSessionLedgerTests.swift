import ChildProcessExit
import HuddleProtocol
import Testing
@testable import HuddleClient

/// The client's resume bookkeeping and backoff, without sockets: the rules that make a
/// reconnect invisible to the application.
@Suite(.ownThread) struct ClientSessionLedgerTests {
    @Test func deliversTheNextOffsetOnlyAndAsksToResyncOnAGap() {
        var ledger = SubscriptionLedger()
        ledger.track("room:a", since: Position(epoch: "e1", offset: 4))
        #expect(ledger.offer(channel: "room:a", epoch: "e1", offset: 4, replayed: true) == .duplicate)
        #expect(ledger.offer(channel: "room:a", epoch: "e1", offset: 5, replayed: true) == .deliver)
        #expect(ledger.offer(channel: "room:a", epoch: "e1", offset: 5, replayed: false) == .duplicate)
        #expect(ledger.offer(channel: "room:a", epoch: "e1", offset: 7, replayed: false) == .gap)
        #expect(ledger.position(of: "room:a") == Position(epoch: "e1", offset: 5), "a gap delivers nothing")
        #expect(ledger.offer(channel: "room:a", epoch: "e2", offset: 6, replayed: false) == .gap, "another epoch is a gap")
        #expect(ledger.offer(channel: "room:b", epoch: "e1", offset: 1, replayed: false) == .untracked)
    }

    @Test func aChannelWithoutPublicationsTakesItsFirstEpoch() {
        var ledger = SubscriptionLedger()
        ledger.track("room:new", since: nil)
        ledger.subscribed(channel: "room:new", epoch: "", offset: 0)
        #expect(ledger.offer(channel: "room:new", epoch: "e9", offset: 2, replayed: false) == .gap)
        #expect(ledger.offer(channel: "room:new", epoch: "e9", offset: 1, replayed: false) == .deliver)
        #expect(ledger.position(of: "room:new") == Position(epoch: "e9", offset: 1))
    }

    @Test func aResyncHoldsLiveOnesBackUntilItsReplyReplaysThem() {
        var ledger = SubscriptionLedger()
        ledger.track("chat:a~b", since: Position(epoch: "e", offset: 10))
        ledger.beginResync("chat:a~b")
        #expect(ledger.offer(channel: "chat:a~b", epoch: "e", offset: 11, replayed: false) == .duplicate, "held back")
        #expect(ledger.offer(channel: "chat:a~b", epoch: "e", offset: 11, replayed: true) == .deliver)
        #expect(ledger.offer(channel: "chat:a~b", epoch: "e", offset: 12, replayed: true) == .deliver)
        ledger.subscribed(channel: "chat:a~b", epoch: "e", offset: 12)
        #expect(ledger.offer(channel: "chat:a~b", epoch: "e", offset: 13, replayed: false) == .deliver, "live again after the reply")
    }

    @Test func aSubscribeReplyMovesToTheLatestButNeverBack() {
        var ledger = SubscriptionLedger()
        ledger.track("room:a", since: Position(epoch: "e", offset: 3))
        // recovered: false — the replay was impossible; delivery continues after the latest.
        ledger.subscribed(channel: "room:a", epoch: "e", offset: 2_000)
        #expect(ledger.position(of: "room:a") == Position(epoch: "e", offset: 2_000))
        ledger.subscribed(channel: "room:a", epoch: "e", offset: 1_999)
        #expect(ledger.position(of: "room:a") == Position(epoch: "e", offset: 2_000), "an older reply does not rewind")
        ledger.subscribed(channel: "room:a", epoch: "f", offset: 7)
        #expect(ledger.position(of: "room:a") == Position(epoch: "f", offset: 7), "a new epoch replaces the old")
        let untracked = ledger.subscribed(channel: "room:gone", epoch: "e", offset: 1)
        #expect(!untracked)
    }

    @Test func trackingAgainKeepsTheLaterPositionAndResumesInNameOrder() {
        var ledger = SubscriptionLedger()
        ledger.track("room:b", since: Position(epoch: "e", offset: 9))
        ledger.track("room:b", since: Position(epoch: "e", offset: 4))
        ledger.track("room:b", since: nil)
        ledger.track("inbox:z", since: nil)
        ledger.track("chat:a~b", since: Position(epoch: "x", offset: 1))
        let resumes = ledger.channelsToResume()
        #expect(resumes.map(\.channel) == ["chat:a~b", "inbox:z", "room:b"])
        #expect(resumes.map(\.since) == [Position(epoch: "x", offset: 1), nil, Position(epoch: "e", offset: 9)])
        ledger.untrack("room:b")
        #expect(!ledger.isTracked("room:b") && ledger.count == 2)
    }

    @Test func backoffDoublesUpToItsCeilingWithFullJitter() {
        let policy = ReconnectPolicy(initialDelayMilliseconds: 250, maxDelayMilliseconds: 5_000, maxAttempts: 4)
        #expect((1...7).map { policy.ceiling(attempt: $0) } == [250, 500, 1_000, 2_000, 4_000, 5_000, 5_000])
        #expect(policy.ceiling(attempt: 10_000) == 5_000, "no overflow however long the outage")
        #expect(policy.delay(attempt: 3, random: 0) == 1_000 && policy.delay(attempt: 3, random: 0.999) == 1)
        #expect(ReconnectPolicy(jitter: 0).delay(attempt: 2, random: 0.7) == 500, "no jitter: the ceiling itself")
        #expect(ReconnectPolicy(jitter: 0.5).delay(attempt: 1, random: 1) == 125, "half jitter: between half and all of it")
        #expect(policy.allows(attempt: 4) && !policy.allows(attempt: 5) && ReconnectPolicy().allows(attempt: 1_000_000))
    }

    @Test func inboxNoticesAreTyped() {
        func notice(_ type: String, _ data: JSONValue, from: String? = nil) -> InboxNotice? {
            InboxNotice(ChannelPublication(channel: "inbox:bob", epoch: "e", offset: 1, type: type, from: from, data: data, time: 0))
        }
        let pair: JSONValue = .object([("from", .string("alice")), ("to", .string("bob"))])
        #expect(notice("friend_request", .object([("from", .string("alice")), ("to", .string("bob")), ("message", .string("hi"))]))
            == .friendRequest(from: "alice", to: "bob", message: "hi"))
        #expect(notice("friend_accepted", pair) == .friendAccepted(from: "alice", to: "bob"))
        #expect(notice("friend_declined", pair) == .friendDeclined(from: "alice", to: "bob"))
        #expect(notice("friend_cancelled", pair) == .friendCancelled(from: "alice", to: "bob"))
        #expect(notice("friend_removed", .object([("user", .string("alice")), ("friend", .string("bob"))])) == .friendRemoved(user: "alice", friend: "bob"))
        #expect(notice("post", .object([])) == .other(type: "post", data: .object([])), "unknown kinds pass through")
        #expect(notice("friend_accepted", .object([])) == nil, "a known kind with the wrong shape")
        #expect(notice("friend_accepted", pair, from: "mallory") == nil, "users cannot forge notices")
    }
}
