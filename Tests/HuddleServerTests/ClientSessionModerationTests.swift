import ChildProcessExit
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient's blocking and report calls (protocol.md, "Blocking", "Reports") against the
/// real server.
@Suite(.ownThread) struct ClientSessionModerationTests {
    @Test func blockUnblockListAndReport() async throws {
        let server = try await startHuddle()
        let alice = try await ClientHarness.signedUp("alice", url: server.url)
        let bob = try await ClientHarness.signedUp("bob", url: server.url)
        try await alice.befriend("alice", bob, "bob")

        let id = try await alice.ok("report") { $0.report(.user("bob"), reason: "spam", text: "ads", completion: $1) }
        #expect(id == 1)
        #expect(try await alice.failure { $0.report(.user("bob"), reason: "spam", completion: $1) }.serverCode == "already_reported")
        try await alice.ok("block") { $0.block("bob", completion: $1) }
        #expect(try await alice.ok("blocks") { $0.blocks(completion: $1) } == ["bob"])
        #expect(try await bob.failure { $0.sendFriendRequest(to: "alice", completion: $1) }.serverCode == "user_not_found")
        #expect(try await alice.failure { $0.block("bob", completion: $1) }.serverCode == "already_blocked")
        try await alice.ok("unblock") { $0.unblock("bob", completion: $1) }
        #expect(try await alice.ok("blocks") { $0.blocks(completion: $1) } == [])
    }
}
