@testable import HuddleCore
import HuddleProtocol
import Testing

/// protocol.md "Notifications and push": what the core owes a user with no live connection.
@Suite struct PushTests {
    static let room = "chat:alice~bob"

    /// alice and bob are friends; bob's only connection is closed (bob is offline), alice's is open.
    private func setUpWithBobOffline() -> (CoreHarness, alice: ConnectionRef, bobSession: NewSession) {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, bobSession) = harness.signUp("bob")
        harness.makeFriends("alice", "bob")
        harness.handle(.connectionClosed(bob))
        return (harness, alice, bobSession)
    }

    private func send(_ harness: CoreHarness, _ connection: ConnectionRef, _ data: String) -> CoreStep {
        harness.handle(.publish(connection, requestID: "p", channel: Self.room, type: "message", data: data))
    }

    private func pushes(_ step: CoreStep) -> [PushNotification] {
        step.outputs.compactMap { output in
            if case .pushNotification(let notification) = output { return notification }
            return nil
        }
    }

    @Test func eachMessageToAnOfflineMemberIsOnePushWithTheRisingBadge() {
        let (harness, alice, _) = setUpWithBobOffline()
        var badges: [UInt64] = []
        for index in 1...3 {
            harness.advance(5)
            let step = send(harness, alice, #"{"text":"hi \#(index)"}"#)
            #expect(step.commands.count == 1, "a push adds no command")
            let sent = pushes(step)
            #expect(sent == [PushNotification(
                user: "bob", kind: .chatMessage, title: "alice", body: .messageData(#"{"text":"hi \#(index)"}"#),
                badge: UInt64(index), target: "huddle://chat/chat:alice~bob", id: "chat:alice~bob/\(index)", from: "alice",
                time: harness.time)])
            badges += sent.map(\.badge)
        }
        #expect(badges == [1, 2, 3])
        // The sender is online, and one's own messages are read: alice is never pushed.
        #expect(harness.core.durableState.readMarkers.offset(of: "alice", in: Self.room) == 3)
    }

    @Test func theBadgeCountsEveryRoomAndFallsWithMarkRead() {
        let (harness, alice, bobSession) = setUpWithBobOffline()
        let (carol, _) = harness.signUp("carol")
        harness.makeFriends("bob", "carol")
        _ = send(harness, alice, "1")
        _ = send(harness, alice, "2")
        let fromCarol = harness.handle(.publish(carol, requestID: "p", channel: "chat:bob~carol", type: "message", data: "3"))
        #expect(pushes(fromCarol).map(\.badge) == [3])
        #expect(pushes(fromCarol).map(\.id) == ["chat:bob~carol/1"])
        // bob reads alice's room on a phone that comes and goes again.
        let phone = harness.connectSignedIn(with: bobSession)
        harness.handle(.markRead(phone, requestID: "m", channel: Self.room, offset: 2))
        harness.handle(.connectionClosed(phone))
        #expect(pushes(send(harness, alice, "4")).map(\.badge) == [2])
    }

    @Test func aMemberOnlineOnAnyDeviceGetsNoPush() {
        let (harness, alice, bobSession) = setUpWithBobOffline()
        let phone = harness.connectSignedIn(with: bobSession)
        // Not subscribed to the room: online is enough (the app refreshes its badge itself).
        #expect(pushes(send(harness, alice, "1")).isEmpty)
        harness.handle(.connectionClosed(phone))
        // Within the presence grace period bob still counts as online for his friends, but no
        // socket can hear him: he is pushed at once.
        #expect(harness.core.isOnline("bob"))
        #expect(pushes(send(harness, alice, "2")).map(\.badge) == [2])
    }

    @Test func aRetriedClientIDPushesNothingAgain() {
        let (harness, alice, _) = setUpWithBobOffline()
        let first = harness.handle(.publish(alice, requestID: "p", channel: Self.room, type: "message", data: "1", clientID: "m-1"))
        #expect(pushes(first).map(\.id) == ["chat:alice~bob/1"])
        let retry = harness.handle(.publish(alice, requestID: "p", channel: Self.room, type: "message", data: "1", clientID: "m-1"))
        #expect(pushes(retry).isEmpty)
    }

    @Test func onlyChatMessagesFromAMemberArePushed() {
        let (harness, alice, _) = setUpWithBobOffline()
        // The HTTP API publishes as nobody; rooms and loc: channels have no one to push.
        #expect(pushes(harness.handle(.serverPublish(requestID: "api-1", channel: Self.room, type: "notice", data: "1"))).isEmpty)
        #expect(pushes(harness.handle(.serverPublish(requestID: "api-2", channel: "inbox:bob", type: "notice", data: "1"))).isEmpty)
        #expect(pushes(harness.publish(alice, "room:lobby")).isEmpty)
        #expect(pushes(harness.publish(alice, "loc:alice")).isEmpty)
        // A refused publish pushes nothing either.
        harness.handle(.removeFriend(alice, requestID: "r", user: "bob"))
        let refused = send(harness, alice, "1")
        #expect(refused.errorCode == .notFriends && pushes(refused).isEmpty)
    }

    @Test func friendRequestsAndAcceptancesReachTheOfflineSide() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, bobSession) = harness.signUp("bob")
        harness.handle(.connectionClosed(bob))

        let asked = harness.handle(.sendFriendRequest(alice, requestID: "r", user: "Bob", message: "coffee?"))
        #expect(pushes(asked) == [PushNotification(
            user: "bob", kind: .friendRequest, title: "alice", body: .text("wants to be friends: coffee?"), badge: 0,
            target: "huddle://friends/requests", id: "inbox:bob/1", from: "alice", time: harness.time)])

        // bob accepts on a phone while alice is offline: alice hears of it.
        let phone = harness.connectSignedIn(with: bobSession)
        harness.handle(.connectionClosed(alice))
        harness.advance(10)
        let accepted = harness.handle(.answerFriendRequest(phone, requestID: "a", user: "alice", accept: true))
        #expect(pushes(accepted) == [PushNotification(
            user: "alice", kind: .friendAccepted, title: "bob", body: .text("accepted your friend request"), badge: 0,
            target: "huddle://friends", id: "inbox:alice/2", from: "bob", time: harness.time)])

        // Crossing requests: the second asker befriends at once, and the first is told.
        let (carol, _) = harness.signUp("carol")
        harness.handle(.sendFriendRequest(carol, requestID: "r", user: "bob", message: ""))
        let crossed = harness.handle(.sendFriendRequest(phone, requestID: "r", user: "carol", message: ""))
        #expect(pushes(crossed).isEmpty, "carol is online")
        harness.handle(.connectionClosed(carol))
        let (dave, _) = harness.signUp("dave")
        let plain = harness.handle(.sendFriendRequest(dave, requestID: "r", user: "carol", message: ""))
        #expect(pushes(plain).map(\.body) == [.text("wants to be friends")])
        #expect(pushes(harness.handle(.sendFriendRequest(phone, requestID: "r", user: "dave", message: ""))).isEmpty)
        harness.handle(.connectionClosed(dave))
        #expect(pushes(harness.handle(.sendFriendRequest(phone, requestID: "r", user: "dave", message: ""))).isEmpty,
                "already_requested: nothing happened")
        // Declines, cancels and removals are not pushed: nothing the user must act on.
        #expect(pushes(harness.handle(.cancelFriendRequest(phone, requestID: "c", user: "dave"))).isEmpty)
        #expect(pushes(harness.handle(.removeFriend(phone, requestID: "x", user: "alice"))).isEmpty)
    }

    @Test func pushesAreNeitherLoggedNorReplayedAndTheStateSurvivesCoding() throws {
        let (harness, alice, bobSession) = setUpWithBobOffline()
        var pushed = 0
        for index in 1...4 { pushed += pushes(send(harness, alice, #"{"text":"\#(index)"}"#)).count }
        let phone = harness.connectSignedIn(with: bobSession)
        harness.handle(.markRead(phone, requestID: "m", channel: Self.room, offset: 3))
        harness.handle(.connectionClosed(phone))
        pushed += pushes(send(harness, alice, "5")).count
        #expect(pushed == 5)

        // A restart replays the log: equal state, and the badge the pushes promised is there.
        let replayed = harness.replayed()
        #expect(replayed.durableState == harness.core.durableState)
        let decoded = try RecordCoding.roundTrip(harness.core.durableState)
        #expect(decoded == harness.core.durableState)
        let restarted = CoreHarness(core: HuddleCore(restoring: decoded))
        let back = restarted.connectSignedIn(with: bobSession)
        #expect(restarted.handle(.unreadCounts(back, requestID: "u")).replies == [
            .unread(rooms: [RoomUnread(channel: Self.room, offset: 5, read: 3, unread: 2)], total: 2)
        ])
    }
}
