@testable import HuddleCore
import HuddleProtocol
import Testing

@Suite struct FriendsTests {
    /// alice and bob signed up (connected), carol too.
    private func setUp() -> (CoreHarness, alice: ConnectionRef, bob: ConnectionRef, carol: ConnectionRef) {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let (carol, _) = harness.signUp("carol")
        return (harness, alice, bob, carol)
    }

    private func request(_ harness: CoreHarness, _ connection: ConnectionRef, _ user: String, _ message: String = "hi") -> CoreStep {
        harness.handle(.sendFriendRequest(connection, requestID: "r", user: user, message: message))
    }

    private func inbox(_ harness: CoreHarness, _ user: String) -> [(type: String, data: String)] {
        guard let channel = harness.core.durableState.channels["inbox:\(user)"] else { return [] }
        return (channel.firstRetainedOffset...channel.lastOffset).map {
            let publication = channel.publication(at: $0, channel: "inbox:\(user)")
            return (publication.type, publication.data)
        }
    }

    private func failureCode(_ reply: CoreReply?) -> CoreErrorCode? {
        guard case .failure(let error)? = reply else { return nil }
        return error.code
    }

    @Test func aRequestAndItsAcceptanceMakeMutualFriends() {
        let (harness, alice, bob, _) = setUp()
        let sent = request(harness, alice, "BOB", "coffee? \"now\"")
        #expect(sent.replies == [.friendRequestSent(becameFriends: false)])
        #expect(sent.commands.first == .sendFriendRequest(from: "alice", to: "bob", message: "coffee? \"now\"", time: harness.time))
        let notice = #"{"from":"alice","to":"bob","message":"coffee? \"now\""}"#
        #expect(inbox(harness, "bob").map(\.type) == ["friend_request"])
        #expect(inbox(harness, "bob").map(\.data) == [notice])
        #expect(inbox(harness, "alice").map(\.data) == [notice])

        let lists = harness.handle(.listFriendRequests(bob, requestID: "l")).replies
        #expect(lists == [.friendRequests(incoming: [FriendRequest(from: "alice", to: "bob", message: "coffee? \"now\"", time: harness.time)], outgoing: [])])

        harness.advance(10)
        let accepted = harness.handle(.answerFriendRequest(bob, requestID: "a", user: "alice", accept: true))
        #expect(accepted.replies == [.done])
        #expect(harness.core.friends(of: "alice") == ["bob"])
        #expect(harness.core.friends(of: "bob") == ["alice"])
        #expect(harness.core.durableState.friendships.requestCount == 0)
        #expect(inbox(harness, "alice").map(\.type) == ["friend_request", "friend_accepted"])
        #expect(inbox(harness, "bob").last?.data == #"{"from":"alice","to":"bob"}"#)
        // Both are online, and presence is for friends: each hears of the other at once.
        #expect(accepted.outputs.contains(.presenceChanged(user: "alice", online: true, to: [bob])))
        #expect(accepted.outputs.contains(.presenceChanged(user: "bob", online: true, to: [alice])))
        #expect(harness.handle(.listFriends(alice, requestID: "f")).replies == [.friends([FriendStatus(username: "bob", online: true)])])
    }

    @Test func refusals() {
        let (harness, alice, bob, _) = setUp()
        #expect(request(harness, alice, "nobody").errorCode == .userNotFound)
        #expect(request(harness, alice, "not a name!").errorCode == .userNotFound)
        #expect(request(harness, alice, "Alice").errorCode == .selfRequest)
        #expect(request(harness, alice, "bob").errorCode == nil)
        #expect(request(harness, alice, "bob").errorCode == .alreadyRequested)
        #expect(harness.handle(.answerFriendRequest(alice, requestID: "a", user: "bob", accept: true)).errorCode == .noRequest)
        #expect(harness.handle(.cancelFriendRequest(bob, requestID: "c", user: "alice")).errorCode == .noRequest)
        #expect(harness.handle(.removeFriend(alice, requestID: "x", user: "bob")).errorCode == .notFriends)
        harness.handle(.answerFriendRequest(bob, requestID: "a", user: "alice", accept: true))
        #expect(request(harness, alice, "bob").errorCode == .alreadyFriends)
        #expect(request(harness, bob, "alice").errorCode == .alreadyFriends)
        let anonymous = harness.connect()
        #expect(request(harness, anonymous, "bob").errorCode == .notAuthenticated)
        // A refusal changes nothing.
        #expect(harness.core.durableState.friendships.friendshipCount == 1)
    }

    @Test func aRequestCrossingAPendingOneBecomesAFriendship() {
        let (harness, alice, bob, _) = setUp()
        _ = request(harness, alice, "bob")
        let crossing = request(harness, bob, "alice")
        #expect(crossing.replies == [.friendRequestSent(becameFriends: true)])
        #expect(crossing.commands.first == .acceptFriendRequest(from: "alice", to: "bob", time: harness.time))
        #expect(harness.core.friends(of: "bob") == ["alice"])
        #expect(harness.core.durableState.friendships.requestCount == 0)
    }

    @Test func declineCancelAndRemove() {
        let (harness, alice, bob, carol) = setUp()
        _ = request(harness, alice, "bob")
        _ = request(harness, carol, "bob")
        #expect(harness.handle(.answerFriendRequest(bob, requestID: "d", user: "alice", accept: false)).replies == [.done])
        #expect(inbox(harness, "alice").last?.type == "friend_declined")
        #expect(harness.handle(.cancelFriendRequest(carol, requestID: "c", user: "bob")).replies == [.done])
        #expect(inbox(harness, "bob").last?.type == "friend_cancelled")
        #expect(harness.handle(.listFriendRequests(bob, requestID: "l")).replies == [.friendRequests(incoming: [], outgoing: [])])
        #expect(harness.core.friends(of: "bob").isEmpty)

        // A declined request may be sent again; after acceptance, removal ends it for both.
        _ = request(harness, alice, "bob")
        harness.handle(.answerFriendRequest(bob, requestID: "a", user: "alice", accept: true))
        let nowhere = DecidedPlace(label: "unknown", placeID: nil, since: nil)
        #expect(harness.subscribe(bob, "loc:alice") == .locationSubscribed(channel: "loc:alice", epoch: "", offset: 0, recovered: nil, publications: [], current: nowhere))
        let removed = harness.handle(.removeFriend(alice, requestID: "x", user: "bob"))
        #expect(removed.replies == [.done])
        #expect(harness.core.friends(of: "bob").isEmpty && harness.core.friends(of: "alice").isEmpty)
        #expect(inbox(harness, "bob").last?.data == #"{"user":"alice","friend":"bob"}"#)
        // bob's live loc:alice subscription relied on the friendship: it is gone, and so is the right.
        let change = harness.handle(.serverPublish(requestID: "p", channel: "loc:alice", type: "place", data: "{}"))
        #expect(change.outputs.allSatisfy { if case .deliver = $0 { false } else { true } })
        #expect(failureCode(harness.subscribe(bob, "loc:alice")) == .forbidden)
    }

    @Test func requestListsAreNewestFirst() {
        let (harness, alice, bob, carol) = setUp()
        _ = request(harness, alice, "carol", "first")
        harness.advance(5)
        _ = request(harness, bob, "carol", "second")
        _ = request(harness, alice, "bob")
        let replies = harness.handle(.listFriendRequests(carol, requestID: "l")).replies
        #expect(replies == [.friendRequests(incoming: [
            FriendRequest(from: "bob", to: "carol", message: "second", time: harness.time),
            FriendRequest(from: "alice", to: "carol", message: "first", time: harness.time - 5),
        ], outgoing: [])])
        guard case .friendRequests(_, let outgoing, _)? = harness.handle(.listFriendRequests(alice, requestID: "l")).replies.first else {
            Issue.record("no list")
            return
        }
        #expect(outgoing.map(\.to) == ["bob", "carol"])
    }

    @Test func friendsSeeEachOthersPresenceAndLocation() {
        let (harness, alice, bob, carol) = setUp()
        _ = request(harness, alice, "bob")
        harness.handle(.answerFriendRequest(bob, requestID: "a", user: "alice", accept: true))
        _ = harness.subscribe(bob, "loc:alice")
        #expect(failureCode(harness.subscribe(carol, "loc:alice")) == .forbidden)
        harness.handle(.connectionClosed(alice))
        harness.advance(FriendPresenceTests.grace)
        #expect(harness.handle(.tick).outputs == [.presenceChanged(user: "alice", online: false, to: [bob])])
        #expect(harness.handle(.listFriends(bob, requestID: "f")).replies == [.friends([FriendStatus(username: "alice", online: false)])])
    }

    @Test func userSearchFindsByPrefixInByteOrder() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        for name in ["bob", "bobby", "bo_b", "carol", "albert", "b0b"] { harness.signUp(name) }
        #expect(harness.handle(.searchUsers(alice, requestID: "s", prefix: "Bo", limit: 20)).replies == [.users(["bo_b", "bob", "bobby"])])
        #expect(harness.handle(.searchUsers(alice, requestID: "s", prefix: "b", limit: 2)).replies == [.users(["b0b", "bo_b"])])
        #expect(harness.handle(.searchUsers(alice, requestID: "s", prefix: "al", limit: 20)).replies == [.users(["albert"])])
        #expect(harness.handle(.searchUsers(alice, requestID: "s", prefix: "z", limit: 20)).replies == [.users([])])
        // The index is rebuilt from the durable accounts on restore.
        let restored = CoreHarness(core: HuddleCore(restoring: harness.core.durableState))
        let (zed, _) = restored.signUp("zed")
        #expect(restored.handle(.searchUsers(zed, requestID: "s", prefix: "bob", limit: 20)).replies == [.users(["bob", "bobby"])])
    }

    @Test func friendshipsReplayAndSurviveCoding() throws {
        let (harness, alice, bob, carol) = setUp()
        _ = request(harness, alice, "bob")
        _ = request(harness, carol, "bob", "yo")
        _ = request(harness, carol, "alice")
        harness.handle(.answerFriendRequest(bob, requestID: "a", user: "alice", accept: true))
        #expect(harness.replayed().durableState == harness.core.durableState)
        let decoded = try RecordCoding.roundTrip(harness.core.durableState)
        #expect(decoded == harness.core.durableState)
        #expect(decoded.friendships.incomingRequests(of: "bob").map(\.from) == ["carol"])
    }
}
