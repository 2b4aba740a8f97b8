import ChildProcessExit
import Foundation
import Testing

/// protocol.md "Profiles", over real sockets against the real binary: setting and clearing a
/// display name and an avatar with their refusals, the profile shown to friends (friends list,
/// requests and their notice, feed posts and comments), the live `profile` event, search by
/// display name, the avatar readable by friends only, and all of it across a graceful restart
/// and a kill -9.
@Suite(.ownThread) struct ProtocolProfilesTests {
    private func signUpAll(_ names: [String], port: Int) throws -> [String: (client: ProtocolClient, token: String)] {
        var users: [String: (ProtocolClient, String)] = [:]
        for name in names { users[name] = try ProtocolClient.signedUp(name, port: port) }
        return users
    }

    private func befriend(_ a: ProtocolClient, _ aName: String, _ b: ProtocolClient, _ bName: String) throws {
        try a.ok("friend_request", ["user": bName])
        try b.ok("friend_accept", ["user": aName])
    }

    @Test func setClearAndTheRefusals() async throws {
        let server = try await startHuddle()
        let (alice, token) = try ProtocolClient.signedUp("alice", port: server.port)
        #expect(JSON.text(try alice.ok("profile")) == JSON.text(["username": "alice", "display_name": NSNull(), "avatar": NSNull()]))
        let set = try alice.ok("profile_set", ["display_name": "Alice Ünal 👩‍💻"])
        #expect(set["display_name"] as? String == "Alice Ünal 👩‍💻" && JSON.isNull(set["avatar"]))
        #expect(try alice.ok("profile")["display_name"] as? String == "Alice Ünal 👩‍💻")

        // Refusals: every rule of a display name, an avatar not the caller's, nothing given.
        for bad in [String(repeating: "x", count: 65), " Alice", "Alice ", "Al\u{202E}ice", "Al\u{0007}ice", "Al\u{E000}ice", "a\nb"] {
            #expect(try alice.errorCode("profile_set", ["display_name": bad]) == "invalid_display_name", "\(bad.debugDescription)")
        }
        try alice.ok("profile_set", ["display_name": String(repeating: "é", count: 64)])
        #expect(try alice.errorCode("profile_set", ["avatar": String(repeating: "a", count: 64)]) == "photo_not_found")
        #expect(try alice.errorCode("profile_set", [:]) == "bad_request")
        #expect(try alice.errorCode("profile_set", ["display_name": 5]) == "bad_request")
        #expect(try ProtocolClient(port: server.port).errorCode("profile", [:]) == "not_authenticated")

        // An avatar must be a photo the caller uploaded.
        let photo = PhotoRequest.photo(1)
        #expect(try PhotoRequest.upload(photo, token: token, port: server.port).status == 201)
        let hash = PhotoRequest.hash(photo)
        let withAvatar = try alice.ok("profile_set", ["avatar": hash])
        #expect(withAvatar["avatar"] as? String == hash && withAvatar["display_name"] as? String == String(repeating: "é", count: 64))
        // "" clears one field and leaves the other.
        let cleared = try alice.ok("profile_set", ["display_name": ""])
        #expect(JSON.isNull(cleared["display_name"]) && cleared["avatar"] as? String == hash)
    }

    @Test func friendsSeeTheProfileEverywhereAndLive() async throws {
        let server = try await startHuddle()
        let users = try signUpAll(["alice", "bob", "carol"], port: server.port)
        let alice = users["alice"]!.client
        let bob = users["bob"]!.client
        let carol = users["carol"]!.client
        let photo = PhotoRequest.photo(2)
        #expect(try PhotoRequest.upload(photo, token: users["alice"]!.token, port: server.port).status == 201)
        let hash = PhotoRequest.hash(photo)
        try alice.ok("profile_set", ["display_name": "Alice A.", "avatar": hash])
        _ = try alice.eventsBeforeBarrier()

        // A request, its notice and the requests list carry the sender's profile; a pending
        // request lets the recipient read the avatar (to judge the request by it).
        try bob.subscribe("inbox:bob")
        try alice.ok("friend_request", ["user": "bob"])
        let notice = try bob.nextEvent("publication")
        #expect(notice["type"] as? String == "friend_request")
        #expect(JSON.text(notice["data"] as Any) == JSON.text(["from": "alice", "to": "bob", "message": "", "display_name": "Alice A.", "avatar": hash]))
        let incoming = try #require(try bob.ok("friend_requests")["incoming"] as? [JSONObject])
        #expect(incoming.first?["display_name"] as? String == "Alice A." && incoming.first?["avatar"] as? String == hash)
        #expect(try PhotoRequest.download(hash, token: users["bob"]!.token, port: server.port).body == photo)
        // A stranger gets 404, as for a photo nobody has.
        #expect(try PhotoRequest.download(hash, token: users["carol"]!.token, port: server.port).status == 404)

        try bob.ok("friend_accept", ["user": "alice"])
        _ = try alice.eventsBeforeBarrier()
        _ = try bob.eventsBeforeBarrier()
        let friends = try #require(try bob.ok("friends")["friends"] as? [JSONObject])
        #expect(friends.first?["display_name"] as? String == "Alice A." && friends.first?["avatar"] as? String == hash)
        // Alice has none set for Bob: the fields are left out.
        let alicesFriends = try #require(try alice.ok("friends")["friends"] as? [JSONObject])
        #expect(alicesFriends.first?["username"] as? String == "bob" && alicesFriends.first?["display_name"] == nil)

        // Feed: posts and comments carry their authors' profiles, in pages and events.
        try alice.ok("post", ["text": "hello"])
        let posted = try bob.nextEvent("post")
        let post = try #require(posted["post"] as? JSONObject)
        #expect(post["author_display_name"] as? String == "Alice A." && post["author_avatar"] as? String == hash)
        _ = try alice.eventsBeforeBarrier()
        try bob.ok("profile_set", ["display_name": "Bobby"])
        _ = try bob.nextEvent("profile")  // Bob's own devices hear of it
        let profileEvent = try alice.nextEvent("profile")
        #expect(profileEvent["user"] as? String == "bob" && profileEvent["display_name"] as? String == "Bobby" && JSON.isNull(profileEvent["avatar"]))
        try bob.ok("comment", ["post": try #require(JSON.int(post["id"])), "text": "hi"])
        let comment = try #require(try alice.nextEvent("comment")["comment"] as? JSONObject)
        #expect(comment["author_display_name"] as? String == "Bobby")
        _ = try bob.eventsBeforeBarrier()
        let page = try #require(try bob.ok("feed")["posts"] as? [JSONObject])
        #expect(page.first?["author_display_name"] as? String == "Alice A.")
        #expect((page.first?["recent_comments"] as? [JSONObject])?.first?["author_display_name"] as? String == "Bobby")

        // Carol, no friend, hears nothing of the change; the next event she gets is her own.
        try alice.ok("profile_set", ["display_name": "Alice B."])
        #expect(try bob.nextEvent("profile")["display_name"] as? String == "Alice B.")
        #expect(try alice.nextEvent("profile")["display_name"] as? String == "Alice B.")
        try carol.ok("profile_set", ["display_name": "Caz"])
        #expect(try carol.nextEvent("profile")["user"] as? String == "carol")

        // Search by display name: prefix, case-insensitive, the caller left out.
        let found = try carol.ok("user_search", ["prefix": "ALICE"])
        #expect(found["users"] as? [String] == ["alice"])
        #expect(JSON.text(found["display_names"] as Any) == JSON.text(["alice": "Alice B."]))
        #expect(try carol.ok("user_search", ["prefix": "bo"])["users"] as? [String] == ["bob"], "by username and by name, once")
        #expect(try carol.ok("user_search", ["prefix": "caz"])["users"] as? [String] == [])
        // Once unfriended, the avatar is no longer Bob's to read.
        try bob.ok("friend_remove", ["user": "alice"])
        #expect(try PhotoRequest.download(hash, token: users["bob"]!.token, port: server.port).status == 404)
    }

    @Test func profilesSurviveAGracefulRestartAndAKill() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var tokens: [String: String] = [:]
        let photo = PhotoRequest.photo(3)
        let hash = PhotoRequest.hash(photo)
        do {
            let server = try await startHuddle(dataDirectory: data)
            let users = try signUpAll(["alice", "bob"], port: server.port)
            tokens = users.mapValues(\.token)
            try befriend(users["alice"]!.client, "alice", users["bob"]!.client, "bob")
            #expect(try PhotoRequest.upload(photo, token: tokens["alice"], port: server.port).status == 201)
            try users["alice"]!.client.ok("profile_set", ["display_name": "Alice", "avatar": hash])
            #expect(try await server.stop() == 0)
        }
        do {
            let server = try await startHuddle(dataDirectory: data)
            let bob = try ProtocolClient.authenticated(tokens["bob"]!, port: server.port)
            let friends = try #require(try bob.ok("friends")["friends"] as? [JSONObject])
            #expect(friends.first?["display_name"] as? String == "Alice" && friends.first?["avatar"] as? String == hash)
            #expect(try bob.ok("user_search", ["prefix": "ali"])["display_names"] != nil)
            let alice = try ProtocolClient.authenticated(tokens["alice"]!, port: server.port)
            try alice.ok("profile_set", ["display_name": "Alicia"])
            try await server.kill9()
        }
        let server = try await startHuddle(dataDirectory: data)
        let bob = try ProtocolClient.authenticated(tokens["bob"]!, port: server.port)
        let friends = try #require(try bob.ok("friends")["friends"] as? [JSONObject])
        #expect(friends.first?["display_name"] as? String == "Alicia" && friends.first?["avatar"] as? String == hash)
        // The display-name index is rebuilt: the old name is gone, the new one found.
        #expect(try bob.ok("user_search", ["prefix": "alicia"])["users"] as? [String] == ["alice"])
        #expect(try PhotoRequest.download(hash, token: tokens["bob"]!, port: server.port).body == photo)
    }
}
