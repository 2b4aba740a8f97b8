@testable import HuddleCore
import HuddleProtocol
import Testing

/// Presence across the nodes of a cluster, in the core: a user is online while connected or in
/// grace here, or while another node says so; friends hear only when that whole flips, and the
/// node tells the others when its own part flips (`localPresence`).
@Suite struct ClusterPresenceTests {
    private static func clusterConfiguration() -> CoreConfiguration {
        var configuration = CoreConfiguration()
        configuration.tellsLocalPresence = true
        return configuration
    }

    /// alice and bob are friends; bob is connected here, alice is not.
    private func setUp(_ configuration: CoreConfiguration = clusterConfiguration()) -> (CoreHarness, bob: ConnectionRef, alice: NewSession) {
        let harness = CoreHarness(configuration: configuration)
        let (alice, aliceSession) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        harness.makeFriends("alice", "bob")
        harness.handle(.connectionClosed(alice))
        harness.advance(configuration.presenceGraceMilliseconds)
        harness.handle(.tick)
        #expect(!harness.core.isOnline("alice"))
        return (harness, bob, aliceSession)
    }

    private func elsewhere(_ harness: CoreHarness, _ user: Username, on node: String, online: Bool) -> [CoreOutput] {
        harness.handle(CoreRequest(.presenceElsewhere(user: user, node: node, online: online))).outputs
    }

    private func gone(_ harness: CoreHarness, _ node: String) -> [CoreOutput] {
        harness.handle(CoreRequest(.nodeGone(node: node))).outputs
    }

    @Test func friendsHearOnlyWhenTheUserIsOnlineNowhereOrNowSomewhere() {
        let (harness, bob, _) = setUp()
        #expect(elsewhere(harness, "alice", on: "node-2", online: true) == [.presenceChanged(user: "alice", online: true, to: [bob])])
        #expect(elsewhere(harness, "alice", on: "node-3", online: true) == [])
        #expect(elsewhere(harness, "alice", on: "node-2", online: true) == [], "said twice, told once")
        #expect(elsewhere(harness, "alice", on: "node-2", online: false) == [])
        #expect(harness.core.isOnline("alice"))
        #expect(elsewhere(harness, "alice", on: "node-3", online: false) == [.presenceChanged(user: "alice", online: false, to: [bob])])
        #expect(elsewhere(harness, "alice", on: "node-3", online: false) == [])
        #expect(!harness.core.isOnline("alice"))
    }

    @Test func aUserMovingFromAnotherNodeToThisOneTellsNobodyButTheOtherNodes() {
        let (harness, bob, aliceSession) = setUp()
        _ = elsewhere(harness, "alice", on: "node-2", online: true)
        let connected = harness.connect()
        let signedIn = harness.handle(.authenticate(connected, requestID: nil, tokenHash: aliceSession.tokenHash))
        #expect(signedIn.outputs.contains(.localPresence(user: "alice", online: true)))
        #expect(!signedIn.outputs.contains { if case .presenceChanged = $0 { true } else { false } })
        #expect(elsewhere(harness, "alice", on: "node-2", online: false) == [], "still connected here")

        // And back: she leaves here while another node has her again.
        harness.handle(.connectionClosed(connected))
        _ = elsewhere(harness, "alice", on: "node-3", online: true)
        harness.advance(harness.core.configuration.presenceGraceMilliseconds)
        #expect(harness.handle(.tick).outputs == [.localPresence(user: "alice", online: false)])
        #expect(gone(harness, "node-3") == [.presenceChanged(user: "alice", online: false, to: [bob])])
    }

    @Test func theLocalPartFlipsAreToldToTheOtherNodesAndToFriends() {
        let (harness, bob, aliceSession) = setUp()
        let connected = harness.connect()
        let signedIn = harness.handle(.authenticate(connected, requestID: nil, tokenHash: aliceSession.tokenHash))
        #expect(signedIn.outputs.filter { !isSignInEvent($0) } == [
            .localPresence(user: "alice", online: true), .presenceChanged(user: "alice", online: true, to: [bob]),
        ])
        let second = harness.connect()
        let again = harness.handle(.authenticate(second, requestID: nil, tokenHash: aliceSession.tokenHash))
        #expect(again.outputs.filter { !isSignInEvent($0) } == [], "a second connection changes nothing")
        harness.handle(.connectionClosed(connected))
        harness.handle(.connectionClosed(second))
        harness.advance(harness.core.configuration.presenceGraceMilliseconds)
        #expect(harness.handle(.tick).outputs == [
            .localPresence(user: "alice", online: false), .presenceChanged(user: "alice", online: false, to: [bob]),
        ])
    }

    @Test func aNodeGoneTakesItsUsersOfflineUnlessOnlineElsewhere() {
        let (harness, bob, _) = setUp()
        harness.signUp("carol")
        harness.makeFriends("carol", "bob")
        _ = elsewhere(harness, "alice", on: "node-2", online: true)
        _ = elsewhere(harness, "carol", on: "node-2", online: true)
        #expect(gone(harness, "node-2") == [.presenceChanged(user: "alice", online: false, to: [bob])], "carol is connected here")
        #expect(harness.core.isOnline("carol"))
        #expect(gone(harness, "node-2") == [])
    }

    @Test func aSingleNodeTellsNobodyOfItsLocalPresence() {
        var configuration = CoreConfiguration()
        configuration.tellsLocalPresence = false
        let (harness, bob, aliceSession) = setUp(configuration)
        let connected = harness.connect()
        let signedIn = harness.handle(.authenticate(connected, requestID: nil, tokenHash: aliceSession.tokenHash))
        #expect(signedIn.outputs.filter { !isSignInEvent($0) } == [.presenceChanged(user: "alice", online: true, to: [bob])])
    }

    @Test func aUserOnlineOnAnotherNodeGetsNoPushAndFriendsListsShowThemOnline() {
        let (harness, bob, _) = setUp()
        _ = elsewhere(harness, "alice", on: "node-2", online: true)
        let friends = harness.handle(.listFriends(bob, requestID: "f")).replies
        #expect(friends == [.friends([FriendStatus(username: "alice", online: true)])])
        let live = harness.handle(.publish(bob, requestID: "p", channel: "chat:alice~bob", type: "message", data: "{}"))
        #expect(!live.outputs.contains { if case .pushNotification = $0 { true } else { false } })
        _ = elsewhere(harness, "alice", on: "node-2", online: false)
        let offline = harness.handle(.publish(bob, requestID: "p", channel: "chat:alice~bob", type: "message", data: "{}"))
        #expect(offline.outputs.contains { if case .pushNotification(let push) = $0 { push.user == "alice" } else { false } })
    }

    @Test func newFriendsHearOfAUserOnlineOnAnotherNode() {
        let harness = CoreHarness(configuration: Self.clusterConfiguration())
        let (alice, _) = harness.signUp("alice")
        harness.handle(.connectionClosed(alice))
        harness.advance(harness.core.configuration.presenceGraceMilliseconds)
        harness.handle(.tick)
        let (bob, _) = harness.signUp("bob")
        _ = elsewhere(harness, "alice", on: "node-2", online: true)
        // alice asked bob on node 2; the command arrives here.
        let told = harness.core.applyReplicated([.acceptFriendRequest(from: "alice", to: "bob", time: harness.time)], at: harness.time)
        #expect(told.contains(.presenceChanged(user: "alice", online: true, to: [bob])))
    }

    private func isSignInEvent(_ output: CoreOutput) -> Bool {
        if case .sessionAccepted = output { return true }
        return false
    }
}
