import HuddleCore
import Testing

@Suite struct SubscriptionTests {
    @Test func subscribingToAnEmptyChannelReportsEpochEmptyAndOffsetZero() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        #expect(harness.subscribe(alice, "room:lobby") == .subscribed(channel: "room:lobby", epoch: "", offset: 0, recovered: nil, publications: []))
    }

    @Test func subscribingTwiceSucceedsAndCountsOnce() {
        var configuration = CoreConfiguration()
        configuration.maxSubscriptionsPerConnection = 2
        let harness = CoreHarness(configuration: configuration)
        let (alice, _) = harness.signUp("alice")
        #expect(harness.handle(.subscribe(alice, requestID: "1", channel: "room:a", since: nil)).errorCode == nil)
        #expect(harness.handle(.subscribe(alice, requestID: "2", channel: "room:a", since: nil)).errorCode == nil)
        #expect(harness.handle(.subscribe(alice, requestID: "3", channel: "room:b", since: nil)).errorCode == nil)
        let third = harness.handle(.subscribe(alice, requestID: "4", channel: "room:c", since: nil))
        #expect(third.errorCode == .tooManySubscriptions)
        // Resubscribing at the limit is still fine: it adds nothing.
        #expect(harness.handle(.subscribe(alice, requestID: "5", channel: "room:b", since: nil)).errorCode == nil)
        harness.handle(.unsubscribe(alice, requestID: "6", channel: "room:a"))
        #expect(harness.handle(.subscribe(alice, requestID: "7", channel: "room:c", since: nil)).errorCode == nil)
        // The one delivery goes to alice once.
        let step = harness.publish(alice, "room:c")
        if case let .deliver(_, recipients)? = step.outputs.last { #expect(recipients == [alice]) } else { Issue.record("\(step)") }
    }

    @Test func theLimitIsPerConnection() {
        var configuration = CoreConfiguration()
        configuration.maxSubscriptionsPerConnection = 1
        let harness = CoreHarness(configuration: configuration)
        let (alice, session) = harness.signUp("alice")
        let other = harness.connectSignedIn(with: session)
        #expect(harness.subscribe(alice, "room:a") != nil)
        #expect(harness.handle(.subscribe(other, requestID: "s", channel: "room:b", since: nil)).errorCode == nil)
        #expect(harness.handle(.subscribe(alice, requestID: "s", channel: "room:b", since: nil)).errorCode == .tooManySubscriptions)
    }

    @Test func unsubscribeFromAChannelNotSubscribedFails() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        #expect(harness.handle(.unsubscribe(alice, requestID: "u", channel: "room:a")).errorCode == .notSubscribed)
        _ = harness.subscribe(alice, "room:a")
        #expect(harness.handle(.unsubscribe(alice, requestID: "u", channel: "room:a")).errorCode == nil)
        #expect(harness.handle(.unsubscribe(alice, requestID: "u", channel: "room:a")).errorCode == .notSubscribed)
        // Anyone may try to unsubscribe from any valid name; there is nothing to forbid.
        #expect(harness.handle(.unsubscribe(alice, requestID: "u", channel: "inbox:bob")).errorCode == .notSubscribed)
    }
}

@Suite struct RoomPresenceTests {
    @Test func listsSignedInUsersWithALiveSubscribedConnectionSortedAndUnique() {
        let harness = CoreHarness()
        let (carol, _) = harness.signUp("carol")
        let (alice, aliceSession) = harness.signUp("alice")
        let aliceAgain = harness.connectSignedIn(with: aliceSession, loop: 1)
        let (bob, _) = harness.signUp("bob")
        let (dave, _) = harness.signUp("dave")
        for connection in [carol, alice, aliceAgain, bob] { _ = harness.subscribe(connection, "room:lobby") }
        _ = harness.subscribe(dave, "room:other")
        harness.handle(.connectionClosed(bob))
        let step = harness.handle(.presence(dave, requestID: "p", channel: "room:lobby"))
        #expect(step.outputs == [.reply(dave, requestID: "p", .presence(channel: "room:lobby", users: ["alice", "carol"]))])
        harness.handle(.connectionClosed(alice))
        #expect(harness.handle(.presence(dave, requestID: "p", channel: "room:lobby")).replies == [.presence(channel: "room:lobby", users: ["alice", "carol"])])
        harness.handle(.unsubscribe(aliceAgain, requestID: "u", channel: "room:lobby"))
        #expect(harness.handle(.presence(dave, requestID: "p", channel: "room:lobby")).replies == [.presence(channel: "room:lobby", users: ["carol"])])
        #expect(harness.handle(.presence(dave, requestID: "p", channel: "room:empty")).replies == [.presence(channel: "room:empty", users: [])])
    }

    @Test func onlyRoomsHavePresence() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        #expect(harness.handle(.presence(alice, requestID: "p", channel: "inbox:alice")).errorCode == .invalidChannel)
        #expect(harness.handle(.presence(alice, requestID: "p", channel: "chat:alice~bob")).errorCode == .invalidChannel)
    }
}
