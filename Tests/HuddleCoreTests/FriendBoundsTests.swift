@testable import HuddleCore
import Testing

/// The friendship bounds (protocol.md, "Limits"), with small ones configured so the tests can
/// reach them.
@Suite struct FriendBoundsTests {
    private func harness(friends: Int = 1000, outgoing: Int = 100, incoming: Int = 1000) -> CoreHarness {
        var configuration = CoreConfiguration()
        configuration.maxFriends = friends
        configuration.maxOutgoingFriendRequests = outgoing
        configuration.maxIncomingFriendRequests = incoming
        return CoreHarness(configuration: configuration)
    }

    private func failure(_ step: CoreStep) -> CoreError? {
        guard case .failure(let error)? = step.replies.first else { return nil }
        return error
    }

    private func befriend(_ harness: CoreHarness, _ first: ConnectionRef, _ second: ConnectionRef, _ secondName: String, _ firstName: String) {
        harness.handle(.sendFriendRequest(first, requestID: "r", user: secondName, message: ""))
        harness.handle(.answerFriendRequest(second, requestID: "a", user: firstName, accept: true))
    }

    @Test func aUserAtTheFriendsBoundCanNeitherAskNorBeAskedNorAccept() {
        let harness = harness(friends: 2)
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let (carol, _) = harness.signUp("carol")
        let (dave, _) = harness.signUp("dave")
        let (erin, _) = harness.signUp("erin")
        // dave asked alice while she had room; she fills up meanwhile.
        harness.handle(.sendFriendRequest(dave, requestID: "d", user: "alice", message: ""))
        befriend(harness, alice, bob, "bob", "alice")
        befriend(harness, alice, carol, "carol", "alice")
        #expect(harness.core.friends(of: "alice") == ["bob", "carol"])

        let asking = harness.handle(.sendFriendRequest(alice, requestID: "x", user: "erin", message: ""))
        #expect(failure(asking)?.code == .tooManyFriends)
        #expect(failure(asking)?.message.contains("you have 2 friends") == true)
        #expect(asking.commands.isEmpty)

        let asked = harness.handle(.sendFriendRequest(erin, requestID: "y", user: "alice", message: ""))
        #expect(failure(asked)?.code == .tooManyFriends)
        #expect(failure(asked)?.message.contains("alice has 2 friends") == true)

        let accepting = harness.handle(.answerFriendRequest(alice, requestID: "z", user: "dave", accept: true))
        #expect(failure(accepting)?.code == .tooManyFriends)
        #expect(harness.core.durableState.friendships.request(from: "dave", to: "alice") != nil, "the request still waits")
        // Declining never needs room.
        let declining = harness.handle(.answerFriendRequest(alice, requestID: "w", user: "dave", accept: false))
        #expect(declining.replies == [.done])

        // Room again after a removal.
        harness.handle(.removeFriend(alice, requestID: "rm", user: "bob"))
        #expect(harness.handle(.sendFriendRequest(alice, requestID: "v", user: "erin", message: "")).replies == [.friendRequestSent(becameFriends: false)])
    }

    @Test func crossingRequestsAreRefusedWhenTheyWouldPassTheFriendsBound() {
        let harness = harness(friends: 1)
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let (carol, _) = harness.signUp("carol")
        harness.handle(.sendFriendRequest(carol, requestID: "c", user: "alice", message: ""))
        befriend(harness, alice, bob, "bob", "alice")
        let crossing = harness.handle(.sendFriendRequest(alice, requestID: "x", user: "carol", message: ""))
        #expect(failure(crossing)?.code == .tooManyFriends)
        #expect(!harness.core.durableState.friendships.areFriends("alice", "carol"))
    }

    @Test func waitingRequestsAreBoundedForTheSenderAndForTheRecipient() {
        let harness = harness(outgoing: 2, incoming: 2)
        let (alice, _) = harness.signUp("alice")
        for name in ["bob", "carol", "dave"] { _ = harness.signUp(name) }
        let (erin, _) = harness.signUp("erin")
        let (frank, _) = harness.signUp("frank")
        let (gina, _) = harness.signUp("gina")

        #expect(harness.handle(.sendFriendRequest(alice, requestID: "1", user: "bob", message: "")).commands.count > 0)
        #expect(harness.handle(.sendFriendRequest(alice, requestID: "2", user: "carol", message: "")).commands.count > 0)
        let third = harness.handle(.sendFriendRequest(alice, requestID: "3", user: "dave", message: ""))
        #expect(failure(third)?.code == .tooManyRequests)
        #expect(failure(third)?.message.contains("you have 2 requests waiting") == true)
        // Cancelling one makes room.
        harness.handle(.cancelFriendRequest(alice, requestID: "4", user: "bob"))
        #expect(harness.handle(.sendFriendRequest(alice, requestID: "5", user: "dave", message: "")).replies == [.friendRequestSent(becameFriends: false)])

        // carol now has one waiting (from alice); two more senders fill her up.
        #expect(harness.handle(.sendFriendRequest(erin, requestID: "6", user: "carol", message: "")).replies == [.friendRequestSent(becameFriends: false)])
        let full = harness.handle(.sendFriendRequest(frank, requestID: "7", user: "carol", message: ""))
        #expect(failure(full)?.code == .tooManyRequests)
        #expect(failure(full)?.message == "carol has too many requests waiting")
        #expect(full.commands.isEmpty)
        _ = gina
    }

    // Friend requests over time (issue 12, problem 2).

    private func pushes(_ step: CoreStep) -> Int {
        step.outputs.filter { if case .pushNotification = $0 { true } else { false } }.count
    }

    @Test func requestsOverTimeAreBudgetedCancelledOnesIncluded() {
        var configuration = CoreConfiguration()
        configuration.friendRequestBurst = 3
        configuration.friendRequestsPerHour = 3
        configuration.friendRequestCooldownMilliseconds = 0
        configuration.friendRequestsReceivedBurst = 100
        let harness = CoreHarness(configuration: configuration)
        let (stranger, _) = harness.signUp("stranger")
        harness.signUp("alice")
        for _ in 1...3 {
            #expect(harness.handle(.sendFriendRequest(stranger, requestID: "r", user: "alice", message: "")).replies == [.friendRequestSent(becameFriends: false)])
            #expect(harness.handle(.cancelFriendRequest(stranger, requestID: "c", user: "alice")).replies == [.done])
        }
        let refused = harness.handle(.sendFriendRequest(stranger, requestID: "r", user: "alice", message: ""))
        #expect(failure(refused)?.code == .friendRequestsLimited)
        #expect(failure(refused)?.retryAfterMilliseconds == Int64(1_200_000))
        #expect(refused.commands.isEmpty && refused.outputs.count == 1, "no notice, no push")
        harness.advance(20 * 60_000)
        #expect(harness.handle(.sendFriendRequest(stranger, requestID: "r", user: "alice", message: "")).replies == [.friendRequestSent(becameFriends: false)])
    }

    @Test func askingAgainAfterACancelWaitsForTheCooldown() {
        let harness = CoreHarness()
        let (stranger, _) = harness.signUp("stranger")
        harness.signUp("alice")
        harness.signUp("bob")
        harness.handle(.sendFriendRequest(stranger, requestID: "r", user: "alice", message: ""))
        harness.handle(.cancelFriendRequest(stranger, requestID: "c", user: "alice"))
        let refused = harness.handle(.sendFriendRequest(stranger, requestID: "r", user: "alice", message: ""))
        #expect(failure(refused)?.code == .requestCooldown)
        #expect(failure(refused)?.retryAfterMilliseconds == Int64(3_600_000))
        // Others may be asked meanwhile; alice once the hour is over.
        #expect(harness.handle(.sendFriendRequest(stranger, requestID: "b", user: "bob", message: "")).replies == [.friendRequestSent(becameFriends: false)])
        harness.advance(60 * 60_000)
        #expect(harness.handle(.sendFriendRequest(stranger, requestID: "r", user: "alice", message: "")).replies == [.friendRequestSent(becameFriends: false)])
    }

    @Test func friendRequestPushesToOneUserAreSpacedOut() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        harness.handle(.connectionClosed(alice))
        let askers = ["bob", "carol", "dave", "erin"].map { harness.signUp($0).connection }
        let sent = askers.prefix(3).map { pushes(harness.handle(.sendFriendRequest($0, requestID: "r", user: "alice", message: ""))) }
        #expect(sent == [1, 0, 0], "one push a minute; the inbox holds every request")
        harness.advance(60_000)
        #expect(pushes(harness.handle(.sendFriendRequest(askers[3], requestID: "r", user: "alice", message: ""))) == 1)
    }
}
