@testable import HuddleCore
import Testing

/// protocol.md "Notifications and push", `match` kind: a match that begins while one side has
/// no live connection is pushed to that side, once, with the match notice's inbox position as
/// its id; its end, a match already in force, and the online side are never pushed.
@Suite struct MatchPushTests {
    private func pushes(_ step: CoreStep) -> [PushNotification] {
        step.outputs.compactMap { output in
            if case .pushNotification(let notification) = output { return notification }
            return nil
        }
    }

    @discardableResult
    private func on(_ harness: CoreHarness, _ connection: ConnectionRef, _ activity: String, friends: [String]? = nil) -> CoreStep {
        harness.handle(.activityOn(connection, requestID: "on", activity: activity, friends: friends, expiresInSeconds: nil))
    }

    /// The newest offset of the user's inbox.
    private func inboxOffset(_ harness: CoreHarness, _ user: String) -> UInt64 {
        harness.core.durableState.channels["inbox:" + user]?.lastOffset ?? 0
    }

    @Test func aMatchIsPushedToTheOfflineSideOnlyAndOnlyWhenItBegins() throws {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, bobSession) = harness.signUp("bob")
        harness.makeFriends("alice", "bob")
        on(harness, bob, "Coffee")
        // bob has one unread chat message when he leaves: the match push carries that badge.
        harness.publish(alice, "chat:alice~bob", #"{"text":"coffee later?"}"#)
        harness.handle(.connectionClosed(bob))

        harness.advance(1_000)
        let matched = on(harness, alice, "coffee")
        #expect(matched.commands.contains(.startMatch(user: "alice", partner: "bob", activity: "Coffee", time: harness.time)))
        #expect(pushes(matched) == [PushNotification(
            user: "bob", kind: .match, title: "alice", body: .text("is up for Coffee too"), badge: 1, target: "huddle://matches",
            id: "inbox:bob/\(inboxOffset(harness, "bob"))", from: "alice", time: harness.time)])
        #expect(PushKind.match.rawValue == "match")

        // Still matched: turning on again, with a new expiry, starts nothing and pushes nothing.
        harness.advance(1_000)
        #expect(pushes(harness.handle(.activityOn(alice, requestID: "on", activity: "Coffee", friends: nil, expiresInSeconds: 600))).isEmpty)
        // The end of a match is not pushed: nothing to act on.
        let ended = harness.handle(.activityOff(alice, requestID: "off", activity: "Coffee"))
        #expect(ended.commands.contains(.endMatch(user: "alice", partner: "bob", activity: "Coffee", reason: .off, time: harness.time)))
        #expect(pushes(ended).isEmpty)

        // bob back online: a new match reaches both live, and nobody is pushed.
        let phone = harness.connectSignedIn(with: bobSession)
        let live = on(harness, alice, "Coffee")
        #expect(live.commands.contains(.startMatch(user: "alice", partner: "bob", activity: "Coffee", time: harness.time)))
        #expect(pushes(live).isEmpty)
        // alice offline now: the match ends on bob's phone, and its end is not pushed to her.
        harness.handle(.connectionClosed(alice))
        #expect(pushes(harness.handle(.activityOff(phone, requestID: "off", activity: "Coffee"))).isEmpty)

        let decoded = try RecordCoding.roundTrip(harness.core.durableState)
        #expect(decoded == harness.core.durableState)
        #expect(harness.replayed().durableState == harness.core.durableState, "pushes leave nothing in the log")
    }

    @Test func theOnlineSideIsToldLiveAndThePushNamesThePartnerAndTheActivity() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        harness.makeFriends("alice", "bob")
        // alice offline with Anything on: bob's Gym is a match on Gym, pushed to alice.
        on(harness, alice, "Anything")
        harness.handle(.connectionClosed(alice))
        let gym = on(harness, bob, "Gym")
        #expect(pushes(gym).map { [$0.user, $0.title, $0.from] } == [["alice", "bob", "bob"]])
        #expect(pushes(gym).map(\.body) == [.text("is up for Gym too")])
        // Both on Anything: a match on Anything.
        let anything = on(harness, bob, "Anything")
        #expect(pushes(anything).map(\.body) == [.text("is up for Anything too")])
        #expect(pushes(anything).map(\.id) == ["inbox:alice/\(inboxOffset(harness, "alice"))"])
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func befriendingAnOfflineUserWithAMatchingStatusPushesTheAcceptanceThenTheMatch() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (dave, _) = harness.signUp("dave")
        on(harness, alice, "Movie")
        on(harness, dave, "Movie")
        harness.handle(.sendFriendRequest(dave, requestID: "f", user: "alice", message: ""))
        harness.handle(.connectionClosed(dave))
        harness.advance(1_000)
        let accepted = harness.handle(.answerFriendRequest(alice, requestID: "a", user: "dave", accept: true))
        let sent = pushes(accepted)
        #expect(sent.map(\.kind) == [.friendAccepted, .match])
        #expect(sent.allSatisfy { $0.user == "dave" && $0.from == "alice" && $0.title == "alice" && $0.time == harness.time })
        #expect(sent.last?.body == .text("is up for Movie too") && sent.last?.target == "huddle://matches")
        // Each notice has its own inbox position: the acceptance first, then the match.
        let newest = inboxOffset(harness, "dave")
        #expect(sent.map(\.id) == ["inbox:dave/\(newest - 1)", "inbox:dave/\(newest)"])
        #expect(harness.replayed().durableState == harness.core.durableState)
    }
}
