import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient delivers issue 16's live events typed, against the real server: a friend's
/// `profile` change and an operator's removal (`publication_removed`) reach the application
/// as `HuddleEvent.profile` and `.publicationRemoved`, never as `.other`.
@Suite(.ownThread) struct ClientLiveEventsTests {
    static let key = "test-api-key-0123456789"

    private func isOther(_ event: HuddleEvent) -> Bool { if case .other = event { return true } else { return false } }

    @Test func aFriendsProfileChangeIsTyped() async throws {
        let server = try await startHuddle()
        let alice = try await ClientHarness.signedUp("alice", url: server.url)
        let bob = try await ClientHarness.signedUp("bob", url: server.url)
        try await alice.befriend("alice", bob, "bob")

        _ = try await alice.ok("profile_set") { $0.setProfile(displayName: "Alice A.", completion: $1) }
        try await bob.waitFor("alice's profile at bob") { events in
            events.contains { if case .profile("alice", UserProfile(displayName: "Alice A."), _) = $0 { return true } else { return false } }
        }
        // Her own client hears it too (her other devices would).
        try await alice.waitFor("alice's own profile event") { events in
            events.contains { if case .profile("alice", let profile, let time) = $0 { return profile.displayName == "Alice A." && time > 0 } else { return false } }
        }
        _ = try await alice.ok("profile_set") { $0.setProfile(displayName: "", completion: $1) }
        try await bob.waitFor("the cleared name at bob") { events in
            events.contains { if case .profile("alice", UserProfile(), _) = $0 { return true } else { return false } }
        }
        #expect(!bob.events.contains(where: isOther), "\(bob.events)")
    }

    @Test func anOperatorsRemovalIsTyped() async throws {
        let server = try await startHuddle(["--api-key", Self.key])
        let alice = try await ClientHarness.signedUp("alice", url: server.url)
        let bob = try await ClientHarness.signedUp("bob", url: server.url)
        let room = "room:lobby"
        let subscribed = try await bob.ok("subscribe") { $0.subscribe(room, completion: $1) }
        _ = try await alice.ok("publish") { $0.publish(room, data: .string("one"), completion: $1) }
        _ = try await alice.ok("publish") { $0.publish(room, data: .string("two"), completion: $1) }
        try await bob.waitFor("both publications") { _ in bob.publications(on: room).count == 2 }
        let epoch = try #require(bob.publications(on: room).first?.epoch)
        #expect(subscribed.channel == room)

        let removed = try HTTPExchange(port: server.port, "POST", "/api/v1/remove", body: #"{"channel": "room:lobby", "offset": 1}"#, key: Self.key)
        #expect(removed.status == 200, "\(removed.body)")
        try await bob.waitFor("the removal at bob") { events in
            events.contains { if case .publicationRemoved(room, epoch, 1, let time) = $0 { return time > 0 } else { return false } }
        }
        // Offsets stay taken: the next publication is delivered as 3, in order, nothing resynced.
        _ = try await alice.ok("publish") { $0.publish(room, data: .string("three"), completion: $1) }
        try await bob.waitFor("the next publication") { _ in bob.publications(on: room).count == 3 }
        #expect(bob.publications(on: room).map(\.offset) == [1, 2, 3])
        #expect(!bob.events.contains(where: isOther), "\(bob.events)")
    }
}
