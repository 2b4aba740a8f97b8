@testable import HuddleCore
import HuddleProtocol
import Testing

/// Profiles in the core: the display-name rules, search by display name (its index kept up by
/// changes, rebuilt on restore, emptied by `eraseProfile`), and what export and erase take.
@Suite struct ProfilesTests {
    @Test func displayNameRules() {
        for good in ["Al", "Ünal 👩‍💻", "李小龍", "a b", String(repeating: "é", count: 64), "O'Brien-Smith"] {
            #expect(DisplayNameRules.violation(of: good) == nil, "\(good)")
        }
        for bad in ["", " a", "a ", "a\u{202E}b", "a\u{200B}b", "a\u{0000}b", "a\u{2028}b", "a\u{F8FF}b", String(repeating: "x", count: 65)] {
            #expect(DisplayNameRules.violation(of: bad) != nil, "\(bad.debugDescription)")
        }
        // 64 characters, but each with many combining marks: over the byte bound.
        #expect(DisplayNameRules.violation(of: String(repeating: "a\u{301}\u{301}\u{301}", count: 40)) != nil)
    }

    @Test func searchByDisplayNameFollowsChangesRestoresAndErasure() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let (zed, _) = harness.signUp("zed")
        harness.handle(.setProfile(bob, requestID: "p", displayName: "Zed's Friend", avatar: nil))
        // Username matches first, then display-name matches, each user once.
        #expect(harness.handle(.searchUsers(alice, requestID: "s", prefix: "ZE", limit: 20)).replies.first.map(Self.users) == ["zed", "bob"])
        harness.handle(.setProfile(bob, requestID: "p", displayName: "Robert", avatar: nil))
        #expect(harness.handle(.searchUsers(alice, requestID: "s", prefix: "zed's", limit: 20)).replies.first.map(Self.users) == [])
        #expect(harness.handle(.searchUsers(zed, requestID: "s", prefix: "rob", limit: 20)).replies.first.map(Self.users) == ["bob"])

        let restored = CoreHarness(core: HuddleCore(restoring: harness.core.durableState))
        let (carol, _) = restored.signUp("carol")
        #expect(restored.handle(.searchUsers(carol, requestID: "s", prefix: "ROB", limit: 20)).replies.first.map(Self.users) == ["bob"])
        #expect(restored.core.durableState.profiles.exported(for: "bob") == .object([("display_name", .string("Robert")), ("avatar", .null)]))

        restored.core.eraseProfile(of: "bob")
        #expect(restored.handle(.searchUsers(carol, requestID: "s", prefix: "rob", limit: 20)).replies.first.map(Self.users) == [])
        #expect(restored.core.durableState.profiles.count == 0)
    }

    private static func users(_ reply: CoreReply) -> [Username] {
        if case .users(let users, _) = reply { return users }
        return ["not a users reply"]
    }
}
