@testable import HuddleCore
import Testing

@Suite struct FriendPresenceTests {
    static let grace = CoreConfiguration().presenceGraceMilliseconds

    @Test func aUserStaysOnlineThroughTheGracePeriodThenGoesOffline() {
        let harness = CoreHarness()
        #expect(!harness.core.isOnline("alice"))
        let (connection, _) = harness.signUp("alice")
        #expect(harness.core.isOnline("alice"))
        harness.handle(.connectionClosed(connection))
        #expect(harness.core.isOnline("alice"))
        harness.advance(Self.grace - 1)
        #expect(harness.handle(.tick) == CoreStep())
        #expect(harness.core.isOnline("alice"))
        harness.advance(1)
        // Nobody is a friend yet, so going offline is announced to no one.
        #expect(harness.handle(.tick) == CoreStep())
        #expect(!harness.core.isOnline("alice"))
    }

    @Test func reconnectingWithinGraceKeepsTheUserOnline() {
        let harness = CoreHarness()
        let (connection, session) = harness.signUp("alice")
        harness.handle(.connectionClosed(connection))
        harness.advance(Self.grace - 1)
        let again = harness.connectSignedIn(with: session)
        harness.advance(1)
        harness.handle(.tick)
        #expect(harness.core.isOnline("alice"))
        // A second disconnection starts a new grace period from its own time.
        harness.handle(.connectionClosed(again))
        harness.advance(Self.grace - 1)
        harness.handle(.tick)
        #expect(harness.core.isOnline("alice"))
        harness.advance(1)
        harness.handle(.tick)
        #expect(!harness.core.isOnline("alice"))
    }

    @Test func onlyTheLastConnectionStartsTheGrace() {
        let harness = CoreHarness()
        let (first, session) = harness.signUp("alice")
        let second = harness.connectSignedIn(with: session, loop: 1)
        harness.handle(.connectionClosed(first))
        harness.advance(Self.grace * 10)
        harness.handle(.tick)
        #expect(harness.core.isOnline("alice"))
        harness.handle(.connectionClosed(second))
        harness.advance(Self.grace)
        harness.handle(.tick)
        #expect(!harness.core.isOnline("alice"))
    }

    @Test func logoutStartsTheGraceLikeAClose() {
        let harness = CoreHarness()
        let (connection, _) = harness.signUp("alice")
        harness.handle(.logout(connection, requestID: "o", all: false))
        #expect(harness.core.isOnline("alice"))
        harness.advance(Self.grace)
        harness.handle(.tick)
        #expect(!harness.core.isOnline("alice"))
    }

    @Test func nobodyHasFriendsYet() {
        let harness = CoreHarness()
        harness.signUp("alice")
        #expect(harness.core.friends(of: "alice").isEmpty)
    }
}

@Suite struct PresenceTrackerTests {
    @Test func comingOnlineIsReportedOnlyOutsideGrace() {
        var tracker = PresenceTracker(graceMilliseconds: 100)
        let cameOnline = tracker.userConnected("alice")
        #expect(cameOnline)
        tracker.userDisconnected("alice", at: 1_000)
        #expect(tracker.isInGrace("alice"))
        let cameBackInGrace = tracker.userConnected("alice")
        #expect(!cameBackInGrace)
        #expect(!tracker.isInGrace("alice"))
        // The cancelled grace end must not take the user offline.
        let staleExpiry = tracker.expire(at: 10_000)
        #expect(staleExpiry == [])
        tracker.userDisconnected("alice", at: 2_000)
        let early = tracker.expire(at: 2_099)
        let due = tracker.expire(at: 2_100)
        #expect(early == [] && due == ["alice"])
        let cameOnlineAgain = tracker.userConnected("alice")
        #expect(cameOnlineAgain)
    }

    @Test func expiriesComeInOrderOfGraceEndThenName() {
        var tracker = PresenceTracker(graceMilliseconds: 10)
        tracker.userDisconnected("carol", at: 5)
        tracker.userDisconnected("bob", at: 0)
        tracker.userDisconnected("alice", at: 5)
        tracker.userDisconnected("dave", at: 50)
        let first = tracker.expire(at: 20)
        let second = tracker.expire(at: 60)
        #expect(first == ["bob", "alice", "carol"])
        #expect(second == ["dave"])
    }
}

@Suite struct ConnectionRegistryTests {
    @Test func friendsConnectionsAreCollectedSorted() {
        var registry = ConnectionRegistry()
        let refs = [ConnectionRef(loop: 1, serial: 5), ConnectionRef(loop: 0, serial: 7), ConnectionRef(loop: 0, serial: 2), ConnectionRef(loop: 2, serial: 1)]
        let users = ["bob", "carol", "bob", "dave"]
        for (index, ref) in refs.enumerated() {
            let opened = registry.open(ref, address: "a")
            #expect(opened)
            let first = registry.authenticate(ref, as: ConnectionIdentity(username: users[index], tokenHash: [UInt8(index)], expiresAt: 1))
            #expect(first == (index != 2))
        }
        let reopened = registry.open(refs[0], address: "again")
        #expect(!reopened)
        #expect(registry.connections(ofAnyOf: ["bob", "carol", "zed"]) == [refs[2], refs[1], refs[0]])
        #expect(registry.connections(usingSessions: [[0], [2], [9]]) == [refs[2], refs[0]])
        _ = registry.close(refs[0])
        #expect(registry.connections(of: "bob") == [refs[2]])
        _ = registry.close(refs[2])
        #expect(!registry.hasConnections(of: "bob"))
    }
}
