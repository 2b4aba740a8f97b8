import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient's typed API for profiles, sessions and passwords, against the real server.
@Suite(.ownThread) struct ClientSessionProfilesTests {
    @Test func profileSessionsAndPasswords() async throws {
        let server = try await startHuddle()
        let alice = try await ClientHarness(url: server.url)
        _ = try await alice.ok("signup") { $0.signUp(username: "alice", email: "alice@example.com", password: testPassword, completion: $1) }

        let set = try await alice.ok("profile_set") { $0.setProfile(displayName: "Alice A.", completion: $1) }
        #expect(set == OwnProfile(username: "alice", profile: UserProfile(displayName: "Alice A.")))
        #expect(try await alice.ok("profile") { $0.profile(completion: $1) }.profile.displayName == "Alice A.")
        #expect(try await alice.failure { $0.setProfile(avatar: String(repeating: "a", count: 64), completion: $1) }.serverCode == "photo_not_found")

        let phone = try await ClientHarness(url: server.url)
        _ = try await phone.ok("login") { $0.logIn(login: "alice", password: testPassword, device: "phone", completion: $1) }
        let list = try await alice.ok("sessions") { $0.sessions(completion: $1) }
        #expect(list.total == 2 && list.sessions.filter(\.current).count == 1)
        let phoneID = try #require(list.sessions.first { $0.device == "phone" }?.id)
        #expect(try await alice.ok("session_revoke") { $0.revokeSession(id: phoneID, completion: $1) } == 1)
        #expect(try await alice.failure { $0.revokeSession(id: phoneID, completion: $1) }.serverCode == "session_not_found")

        #expect(try await alice.failure { $0.changePassword(from: "not it at all", to: "a new password", completion: $1) }.serverCode == "invalid_credentials")
        #expect(try await alice.ok("password_change") { $0.changePassword(from: testPassword, to: "a new password", completion: $1) } == 0)
        let anonymous = try await ClientHarness(url: server.url)
        #expect(try await anonymous.failure { $0.requestPasswordReset(login: "alice", completion: $1) }.serverCode == "unavailable")
        #expect(try await anonymous.failure {
            $0.resetPassword(login: "alice", code: "12345678", newPassword: "another one!", completion: $1)
        }.serverCode == "unavailable")
        _ = try await anonymous.ok("login") { $0.logIn(login: "alice", password: "a new password", completion: $1) }
    }
}
