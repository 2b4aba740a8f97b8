@testable import HuddleCore
import HuddleProtocol
import Testing

@Suite struct ChatTests {
    /// alice and bob are friends; carol is nobody's.
    private func setUp() -> (CoreHarness, alice: ConnectionRef, bob: ConnectionRef, carol: ConnectionRef) {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let (carol, _) = harness.signUp("carol")
        harness.makeFriends("alice", "bob")
        return (harness, alice, bob, carol)
    }

    private func send(_ harness: CoreHarness, _ connection: ConnectionRef, _ data: String, clientID: String? = nil) -> CoreStep {
        harness.handle(.publish(connection, requestID: "p", channel: "chat:alice~bob", type: "message", data: data, clientID: clientID))
    }

    @Test func onlyFriendsWriteAndMembersStillRead() {
        let (harness, alice, bob, carol) = setUp()
        harness.makeFriends("alice", "carol")
        #expect(harness.handle(.publish(carol, requestID: "p", channel: "chat:alice~bob", type: "m", data: "1")).errorCode == .forbidden)
        #expect(send(harness, alice, "1").errorCode == nil)
        harness.handle(.removeFriend(bob, requestID: "r", user: "alice"))
        #expect(send(harness, alice, "2").errorCode == .notFriends)
        #expect(harness.handle(.typing(alice, requestID: "t", channel: "chat:alice~bob")).errorCode == .notFriends)
        #expect(harness.handle(.history(bob, requestID: "h", channel: "chat:alice~bob", before: nil, limit: 10)).errorCode == nil)
        #expect(harness.handle(.publish(carol, requestID: "p", channel: "chat:alice~carol", type: "m", data: "1")).errorCode == nil)
    }

    @Test func aRetriedClientIDIsStoredAndDeliveredOnce() {
        let (harness, alice, bob, _) = setUp()
        _ = harness.subscribe(bob, "chat:alice~bob")
        let first = send(harness, alice, "\"hi\"", clientID: "m-1")
        #expect(first.commands.count == 1)
        guard case .published(let epoch, 1, let time)? = first.replies.first else {
            Issue.record("\(first.outputs)")
            return
        }
        guard case .deliver(let publication, [bob])? = first.outputs.last else {
            Issue.record("\(first.outputs)")
            return
        }
        #expect(publication.clientID == "m-1")
        harness.advance(100)
        let retry = send(harness, alice, "\"hi\"", clientID: "m-1")
        #expect(retry == CoreStep(outputs: [.reply(alice, requestID: "p", .alreadyPublished(epoch: epoch, offset: 1, time: time))]))
        // The id is the publisher's: bob may use the same one; a new id is a new message.
        #expect(send(harness, bob, "1", clientID: "m-1").replies.first?.publishedOffset == 2)
        #expect(send(harness, alice, "1", clientID: "m-2").replies.first?.publishedOffset == 3)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func aClientIDIsRememberedAsLongAsItsPublicationIsKept() throws {
        var configuration = CoreConfiguration()
        configuration.history[.chat] = HistoryLimit(maxPublications: 2, maxAgeMilliseconds: CoreHarness.day)
        let harness = CoreHarness(configuration: configuration)
        let (alice, _) = harness.signUp("alice")
        harness.signUp("bob")
        harness.makeFriends("alice", "bob")
        _ = send(harness, alice, "1", clientID: "a")
        _ = send(harness, alice, "2", clientID: "b")
        // Still kept, and still kept after a snapshot round trip: a retry stores nothing.
        let restored = CoreHarness(core: HuddleCore(configuration: configuration, restoring: try RecordCoding.roundTrip(harness.core.durableState)))
        let again = restored.connectSignedIn(with: NewSession(tokenHash: CoreHarness.tokenHash(1), expiresAt: .max))
        #expect(restored.handle(.publish(again, requestID: "p", channel: "chat:alice~bob", type: "message", data: "1", clientID: "a")).commands.isEmpty)
        _ = send(harness, alice, "3", clientID: "c")
        // "a" was trimmed with its publication: the same id is a new message now.
        #expect(send(harness, alice, "1", clientID: "a").replies.first?.publishedOffset == 4)
    }

    @Test func readMarkersUnreadCountsAndTheBadge() {
        let (harness, alice, bob, carol) = setUp()
        harness.makeFriends("bob", "carol")
        for index in 1...3 { _ = send(harness, alice, "\(index)") }
        harness.handle(.publish(carol, requestID: "p", channel: "chat:bob~carol", type: "m", data: "1"))
        let rooms = [
            RoomUnread(channel: "chat:alice~bob", offset: 3, read: 0, unread: 3),
            RoomUnread(channel: "chat:bob~carol", offset: 1, read: 0, unread: 1),
        ]
        #expect(harness.handle(.unreadCounts(bob, requestID: "u")).replies == [.unread(rooms: rooms, total: 4)])
        // The publisher has read up to its own message.
        #expect(harness.handle(.unreadCounts(alice, requestID: "u")).replies
            == [.unread(rooms: [RoomUnread(channel: "chat:alice~bob", offset: 3, read: 3, unread: 0)], total: 0)])

        let marked = harness.handle(.markRead(bob, requestID: "m", channel: "chat:alice~bob", offset: 2))
        #expect(marked.commands == [.markRead(user: "bob", channel: "chat:alice~bob", offset: 2, time: harness.time)])
        #expect(marked.replies == [.readMarker(channel: "chat:alice~bob", read: 2, unread: 1, badge: 2)])
        // Never backwards, and past the end means everything.
        let back = harness.handle(.markRead(bob, requestID: "m", channel: "chat:alice~bob", offset: 1))
        #expect(back.commands.isEmpty && back.replies == [.readMarker(channel: "chat:alice~bob", read: 2, unread: 1, badge: 2)])
        #expect(harness.handle(.markRead(bob, requestID: "m", channel: "chat:alice~bob", offset: 99)).replies
            == [.readMarker(channel: "chat:alice~bob", read: 3, unread: 0, badge: 1)])
        // Replying reads the room.
        harness.handle(.publish(bob, requestID: "p", channel: "chat:bob~carol", type: "m", data: "1"))
        #expect(harness.core.badge(of: "bob") == 0)
        #expect(harness.handle(.markRead(carol, requestID: "m", channel: "chat:alice~bob", offset: 1)).errorCode == .forbidden)
        #expect(harness.handle(.markRead(bob, requestID: "m", channel: "room:lobby", offset: 1)).errorCode == .invalidChannel)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func typingGoesToTheOtherMembersConnectionsOnlyAndIsNeverLogged() {
        let (harness, alice, bob, carol) = setUp()
        let bobsPhone = harness.connectSignedIn(with: NewSession(tokenHash: CoreHarness.tokenHash(2), expiresAt: .max))
        let step = harness.handle(.typing(alice, requestID: "t", channel: "chat:alice~bob"))
        #expect(step.commands.isEmpty)
        #expect(step.outputs == [
            .reply(alice, requestID: "t", .done),
            .typing(channel: "chat:alice~bob", user: "alice", to: [bob, bobsPhone].sorted()),
        ])
        #expect(harness.handle(.typing(carol, requestID: "t", channel: "chat:alice~bob")).errorCode == .forbidden)
        #expect(harness.core.durableState.channels["chat:alice~bob"] == nil)
    }
}
