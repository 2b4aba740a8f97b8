import ChildProcessExit
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient's typed activity calls and match notices (protocol.md, "Activities and
/// matches") against the real server.
@Suite(.ownThread) struct ClientSessionActivitiesTests {
    @Test func statusesMatchesAndTheirNotices() async throws {
        let server = try await startHuddle()
        let alice = try await ClientHarness.signedUp("alice", url: server.url)
        let bob = try await ClientHarness.signedUp("bob", url: server.url)
        let carol = try await ClientHarness.signedUp("carol", url: server.url)
        for (client, name) in [(alice, "alice"), (bob, "bob"), (carol, "carol")] {
            _ = try await client.ok("inbox") { $0.subscribe("inbox:\(name)", completion: $1) }
        }
        try await alice.befriend("alice", bob, "bob")
        try await carol.befriend("carol", bob, "bob")

        let none = try await alice.ok("activities") { $0.activities(completion: $1) }
        #expect(none == ActivityList(available: ["Gym", "Coffee", "Eat", "Study", "Movie", "Shopping", "Anything"], mine: []))

        let bobs = try await bob.ok("bob on") { $0.activityOn("coffee", completion: $1) }
        #expect(bobs.activity == "Coffee" && bobs.audience == nil && bobs.expiresAt - bobs.since == 7_200_000)
        let alices = try await alice.ok("alice on") { $0.activityOn("Coffee", friends: ["Bob"], expiresIn: 600, completion: $1) }
        #expect(alices.activity == "Coffee" && alices.audience == ["bob"] && alices.expiresAt - alices.since == 600_000)
        _ = try await bob.ok("bob on gym") { $0.activityOn("Gym", friends: ["carol"], completion: $1) }
        _ = try await carol.ok("carol up for anything") { $0.activityOn("Anything", completion: $1) }

        try await alice.waitFor("alice's match") { _ in alice.notices(of: "alice").contains(.match(user: "bob", activity: "Coffee")) }
        try await bob.waitFor("bob's matches") { _ in bob.notices(of: "bob").filter { if case .match = $0 { return true } else { return false } }.count == 3 }
        for match in [InboxNotice.match(user: "alice", activity: "Coffee"), .match(user: "carol", activity: "Coffee"), .match(user: "carol", activity: "Gym")] {
            #expect(bob.notices(of: "bob").contains(match), "\(match)")
        }
        #expect(try await alice.ok("activities") { $0.activities(completion: $1) }.mine == [alices])

        let byTime = try await bob.ok("matches") { $0.matches(completion: $1) }
        #expect(byTime.count == 3 && byTime.map(\.since) == byTime.map(\.since).sorted(by: >), "newest first")
        let byActivity = try await bob.ok("matches by activity") { $0.matches(order: .activity, completion: $1) }
        #expect(byActivity.map(\.activity) == ["Gym", "Coffee", "Coffee"], "the list's order")
        #expect(try await alice.ok("alice's matches") { $0.matches(completion: $1) }.map { [$0.user, $0.activity] } == [["bob", "Coffee"]])

        #expect(try await alice.failure { $0.activityOn("Tennis", completion: $1) }.serverCode == "unknown_activity")
        #expect(try await alice.failure { $0.activityOn("Gym", friends: ["carol"], completion: $1) }.serverCode == "not_friends")
        #expect(try await alice.failure { $0.activityOn("Gym", expiresIn: 0, completion: $1) }.serverCode == "bad_request")
        #expect(try await alice.failure { $0.activityOff("Gym", completion: $1) }.serverCode == "not_on")

        // Off: both partners are told, with the reason.
        try await bob.ok("bob off") { $0.activityOff("Coffee", completion: $1) }
        try await alice.waitFor("the end") { _ in alice.notices(of: "alice").last == .matchEnded(user: "bob", activity: "Coffee", reason: .off) }
        try await carol.waitFor("carol's end") { _ in carol.notices(of: "carol").contains(.matchEnded(user: "bob", activity: "Coffee", reason: .off)) }
        #expect(try await alice.ok("after") { $0.matches(completion: $1) }.isEmpty)
        #expect(MatchEndReason("expired") == .expired && MatchEndReason("unfriended") == .unfriended && MatchEndReason("audience") == .audience)
        #expect(MatchEndReason("moved") == .other("moved"))
    }
}
