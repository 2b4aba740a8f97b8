import HuddleClient
import HuddleProtocol

/// Signed-up users and friendships for the tests of the typed feed, activity and place calls.
extension ClientHarness {
    /// A new user `name` signed up on a client of its own (on `url`, e.g. a proxy in front of the server).
    static func signedUp(_ name: String, url: String) async throws -> ClientHarness {
        let client = try await ClientHarness(url: url)
        _ = try await client.ok("signup \(name)") {
            $0.signUp(username: name, email: "\(name)@example.com", password: testPassword, completion: $1)
        }
        return client
    }

    /// This user (`name`) and `other` (`otherName`) become friends.
    func befriend(_ name: String, _ other: ClientHarness, _ otherName: String) async throws {
        _ = try await ok("friend request") { $0.sendFriendRequest(to: otherName, completion: $1) }
        try await other.ok("accept") { $0.acceptFriendRequest(from: name, completion: $1) }
    }

    /// The feed events delivered so far, in order.
    var feedEvents: [FeedEvent] {
        events.compactMap { if case .feed(let change) = $0 { return change } else { return nil } }
    }

    /// The typed notices delivered on `inbox:name`, in order.
    func notices(of name: String) -> [InboxNotice] { publications(on: "inbox:\(name)").compactMap(InboxNotice.init) }

    /// `connected` events and whether each resumed a session.
    var connections: [Bool] {
        events.compactMap { if case .connected(_, let resumed) = $0 { return resumed } else { return nil } }
    }
}
