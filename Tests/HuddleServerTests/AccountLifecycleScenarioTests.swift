import ChildProcessExit
import Foundation
import JWTTestSupport
import Testing

/// Issue 16's acceptance scenario, over real sockets against the real binary: ann signs up with
/// an identity provider (a local test issuer), shows a display name and an avatar, befriends bob
/// and carol, chats, posts, sets a place, keeps a memory with a photo and blocks a stranger; bob
/// blocks and reports her; the operator removes the reported post and resolves the report; ann
/// takes her export archive over HTTP (every item of hers is in it, her photos byte for byte),
/// then deletes her account with a fresh sign-in (she has no password). Afterwards, after a
/// graceful restart and after a kill -9, no op, history page, search, photo URL, export URL or
/// the operator's report list finds anything of hers beyond what protocol.md "Deletion and
/// retention" says remains.
@Suite(.ownThread) struct AccountLifecycleScenarioTests {
    static let key = "test-api-key-0123456789"
    static let audience = "huddle-test-app"
    static let signingKey = TestSigningKey(.rsa, keyID: "rsa-1")
    static let subject = "ann-at-the-provider"
    static let displayName = "Annabel Lee"

    /// An ID token for ann issued `issuedAgo` seconds ago.
    static func idToken(_ issuer: String, issuedAgo: Int = 5, nonce: String? = nil) -> String {
        let now = Int(Date().timeIntervalSince1970)
        var claims: JSONObject = ["iss": issuer, "sub": subject, "aud": audience, "exp": now + 3600, "iat": now - issuedAgo]
        if let nonce { claims["nonce"] = nonce }
        return signingKey.sign(JSON.text(claims))
    }

    struct Ann {
        var token: String
        var avatar: String
        var memoryPhoto: String
        var chatText: String
    }

    private func photoFile(_ hash: String, in data: URL) -> String {
        data.appendingPathComponent("photos").appendingPathComponent(String(hash.prefix(2))).appendingPathComponent(hash).path
    }

    /// Polls `condition` until it holds (work the server finishes off its core thread).
    private func waitUntil(_ what: String, timeout: Double = 20, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else { throw TestFailure("\(what): not within \(timeout) s") }
            usleep(20_000)
        }
    }

    /// Nothing of ann is found by carol (her friend until the end) or by the operator.
    private func expectAnnIsGone(_ ann: Ann, issuer: String, port: Int, data: URL) throws {
        let carol = try ProtocolClient(port: port)
        let carolToken = try carol.login("carol")
        // Search, by username and by display name.
        #expect((try carol.ok("user_search", ["prefix": "ann"])["users"] as? [String])?.isEmpty == true)
        #expect((try carol.ok("user_search", ["prefix": "Annabel"])["users"] as? [String])?.isEmpty == true)
        #expect((try carol.ok("friends")["friends"] as? [JSONObject])?.compactMap { $0["username"] as? String } == ["bob"])
        #expect(try carol.errorCode("where", ["user": "ann"]) == "user_not_found")
        // The chat room with her is gone whole; her post, like, comment are gone from the feed.
        let chat = try carol.ok("history", ["channel": "chat:ann~carol"])
        #expect((chat["publications"] as? [JSONObject])?.isEmpty == true, "\(chat)")
        let feed = try carol.ok("feed")
        #expect(!JSON.text(feed).contains("\"ann\"") && !JSON.text(feed).contains(Self.displayName), "\(feed)")
        // Nor is she in carol's export: no like, comment, friendship or request of hers.
        let export = JSON.text(try carol.ok("account_export"))
        #expect(!export.contains("\"ann\"") && !export.contains("ann on carol's post") && !export.contains(ann.chatText), "\(export)")
        // Her photos: the avatar and the memory's photo are gone from disk and from every URL.
        for hash in [ann.avatar, ann.memoryPhoto] {
            try waitUntil("her photo's file is removed") { !FileManager.default.fileExists(atPath: photoFile(hash, in: data)) }
            #expect(try PhotoRequest.download(hash, token: carolToken, port: port).status == 404)
            #expect(try PhotoRequest.download(hash, token: ann.token, port: port).status == 401)
        }
        // Her export archive: the URL refuses her old token.
        let archive = try ExportArchive.download(token: ann.token, port: port).response
        #expect(archive.status == 401 && archive.headers["www-authenticate"] == "Bearer", "\(archive.status)")
        // Her session and her identity: the token is refused, and the identity signs into no
        // account (a sign-in would make a new one, but her name is quarantined).
        let probe = try ProtocolClient(port: port)
        #expect(try probe.errorCode("auth", ["token": ann.token]) == "invalid_token")
        #expect(try probe.errorCode("identity_signin", ["token": Self.idToken(issuer), "username": "ann"]) == "username_taken")
        // The operator: the report about her was resolved, so it is not kept; none names her.
        let reports = try HTTPExchange(port: port, "GET", "/api/v1/reports", key: Self.key)
        #expect(reports.status == 200 && !reports.body.contains("\"ann\""), "\(reports.body)")
        // bob keeps his own history with carol.
        #expect(((try carol.ok("history", ["channel": "chat:bob~carol"])["publications"] as? [JSONObject]) ?? []).count == 1)
    }

    @Test func aUserSignsUpWithAProviderLivesDeletesAndNothingOfThemRemains() async throws {
        let idp = try JWKSServer(issuer: "https://idp.test", keys: [Self.signingKey])
        defer { idp.stop() }
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let flags = ["--api-key", Self.key, "--oidc-issuer", idp.flag(audience: Self.audience)]
        let server = try await startHuddle(flags, dataDirectory: data)
        let port = server.port

        // ann signs up with the provider: no password.
        let annClient = try ProtocolClient(port: port)
        let signedIn = try annClient.ok("identity_signin", ["token": Self.idToken(idp.issuer, nonce: "n-1"), "username": "ann", "device": "ann's phone"])
        let annToken = try #require(signedIn["token"] as? String)
        // Her display name and avatar (a photo she uploads).
        let avatarBytes = PhotoRequest.photo(7)
        #expect([200, 201].contains(try PhotoRequest.upload(avatarBytes, token: annToken, port: port).status))
        let avatar = PhotoRequest.hash(avatarBytes)
        try annClient.ok("profile_set", ["display_name": Self.displayName, "avatar": avatar])

        // Two friends.
        let (bob, bobToken) = try ProtocolClient.signedUp("bob", port: port)
        let (carol, _) = try ProtocolClient.signedUp("carol", port: port)
        for (friend, name) in [(bob, "bob"), (carol, "carol")] {
            try annClient.ok("friend_request", ["user": name])
            try friend.ok("friend_accept", ["user": "ann"])
        }
        try bob.ok("friend_request", ["user": "carol"])
        try carol.ok("friend_accept", ["user": "bob"])
        // Friends see her by display name and fetch her avatar.
        let found = try carol.ok("user_search", ["prefix": "annabel"])
        #expect(found["users"] as? [String] == ["ann"], "\(found)")
        #expect(try PhotoRequest.download(avatar, token: bobToken, port: port).status == 200)

        // She chats, posts, sets a place, keeps a memory with a photo.
        let chatText = "ann's words to carol"
        try annClient.publish("chat:ann~carol", chatText)
        try annClient.publish("chat:ann~bob", "ann's words to bob")
        try bob.publish("chat:bob~carol", "bob to carol")
        let post = try #require(JSON.int((try annClient.ok("post", ["text": "ann's post"])["post"] as? JSONObject)?["id"]))
        try carol.ok("like", ["post": post])
        try annClient.ok("comment", ["post": post, "text": "ann's comment"])
        let keptPost = try #require(JSON.int((try annClient.ok("post", ["text": "ann's second post"])["post"] as? JSONObject)?["id"]))
        let carolPost = try #require(JSON.int((try carol.ok("post", ["text": "carol's post"])["post"] as? JSONObject)?["id"]))
        try annClient.ok("like", ["post": carolPost])
        try annClient.ok("comment", ["post": carolPost, "text": "ann on carol's post"])
        try annClient.ok("place_set", ["label": "home", "lat": 52.52, "lon": 13.405, "radius": 100])
        let memoryBytes = PhotoRequest.photo(8)
        #expect([200, 201].contains(try PhotoRequest.upload(memoryBytes, token: annToken, port: port).status))
        let memory = try #require(JSON.int((try annClient.ok("memory_create", ["title": "Berlin", "date": "2025-06-14"])["memory"] as? JSONObject)?["id"]))
        try annClient.ok("point_add", ["memory": memory, "time": 1_750_000_000_000, "photos": [PhotoRequest.hash(memoryBytes)]])
        let ann = Ann(token: annToken, avatar: avatar, memoryPhoto: PhotoRequest.hash(memoryBytes), chatText: chatText)
        // She blocks a stranger.
        _ = try ProtocolClient.signedUp("eve", port: port)
        try annClient.ok("block", ["user": "eve"])

        // bob reports her post, then blocks her: she is out of his search and her avatar is his no more.
        let report = try #require(JSON.int(try bob.ok("report", ["kind": "post", "post": post, "reason": "spam", "text": "ads"])["report"]))
        try bob.ok("block", ["user": "ann"])
        #expect((try bob.ok("user_search", ["prefix": "annabel"])["users"] as? [String])?.isEmpty == true)
        #expect((try bob.ok("user_search", ["prefix": "ann"])["users"] as? [String])?.isEmpty == true)
        #expect(try PhotoRequest.download(avatar, token: bobToken, port: port).status == 404)
        #expect(try bob.errorCode("friend_request", ["user": "ann"]) == "user_blocked")

        // The operator removes the reported post and resolves the report.
        let listed = try HTTPExchange(port: port, "GET", "/api/v1/reports?status=open", key: Self.key)
        #expect(listed.body.contains("\"ann\""), "the report names her while her account is there")
        #expect(try HTTPExchange(port: port, "POST", "/api/v1/remove", body: "{\"post\": \(post)}", key: Self.key).status == 200)
        let resolved = try HTTPExchange(port: port, "POST", "/api/v1/reports/\(report)/resolve", body: "{\"action\": \"content_removed\", \"note\": \"\"}", key: Self.key)
        #expect(resolved.status == 200, "\(resolved.body)")
        #expect(!JSON.text(try carol.ok("feed")).contains("ann's post"))

        // She takes her export archive over HTTP: every item of hers is in its export.json, her
        // photos are in it byte for byte, no secret is.
        let (exportResponse, archive) = try ExportArchive.download(token: annToken, port: port)
        #expect(exportResponse.status == 200, "\(exportResponse.status)")
        let export = try #require(archive?.document)
        let exportText = JSON.text(export)
        #expect((export["account"] as? JSONObject)?["username"] as? String == "ann")
        #expect((export["profile"] as? JSONObject)?["display_name"] as? String == Self.displayName, "\(export["profile"] ?? "")")
        #expect((export["profile"] as? JSONObject)?["avatar"] as? String == avatar)
        #expect(((export["identities"] as? [JSONObject]) ?? []).map { $0["subject"] as? String } == [Self.subject])
        #expect(((export["sessions"] as? [JSONObject]) ?? []).map { $0["device"] as? String } == ["ann's phone"])
        #expect(export["friends"] as? [String] == ["carol"], "bob's block ended their friendship")
        #expect((export["blocks"] as? JSONObject)?["blocked"] as? [String] == ["eve"])
        let messages = ((export["messages"] as? [JSONObject]) ?? []).map { "\($0["channel"] ?? ""): \($0["data"] ?? "")" }
        #expect(messages.contains { $0.hasPrefix("chat:ann~carol") && $0.contains(chatText) }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("chat:ann~bob") && $0.contains("ann's words to bob") }, "\(messages)")
        #expect(((export["posts"] as? [JSONObject]) ?? []).map { JSON.int($0["id"]) } == [keptPost], "the removed post is not hers any more")
        #expect(((export["comments"] as? [JSONObject]) ?? []).map { $0["text"] as? String } == ["ann on carol's post"])
        #expect(((export["likes"] as? [Any]) ?? []).map { JSON.int($0) } == [carolPost])
        #expect(((export["places"] as? [JSONObject]) ?? []).map { $0["label"] as? String } == ["home"])
        #expect(((export["memories"] as? [JSONObject]) ?? []).map { $0["title"] as? String } == ["Berlin"])
        #expect(exportText.contains(ann.memoryPhoto), "the memory's point names its photo")
        #expect(Set(((export["photos"] as? [JSONObject]) ?? []).compactMap { $0["hash"] as? String }) == [avatar, ann.memoryPhoto])
        #expect(archive?.photos == [avatar: avatarBytes, ann.memoryPhoto: memoryBytes], "her photos, byte for byte")
        #expect(!exportText.contains(annToken), "no session token")

        // Deletion needs a fresh sign-in: no password (she has none), nor a stale or a foreign token.
        #expect(try annClient.errorCode("account_delete", ["password": ProtocolClient.password]) == "invalid_credentials")
        #expect(try annClient.errorCode("account_delete", ["token": Self.idToken(idp.issuer, issuedAgo: 600)]) == "invalid_credentials")
        let stranger = Self.signingKey.sign(JSON.text([
            "iss": idp.issuer, "sub": "someone-else", "aud": Self.audience, "exp": Int(Date().timeIntervalSince1970) + 600,
            "iat": Int(Date().timeIntervalSince1970),
        ] as JSONObject))
        #expect(try annClient.errorCode("account_delete", ["token": stranger]) == "invalid_credentials")
        #expect(try annClient.errorCode("account_delete", ["token": Self.idToken(idp.issuer, nonce: "n-1")]) == "nonce_reused")
        #expect((try annClient.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "ann")
        try annClient.ok("account_delete", ["token": Self.idToken(idp.issuer, nonce: "n-2")])
        #expect(try annClient.closeCode()?.rawValue == 4001)
        try expectAnnIsGone(ann, issuer: idp.issuer, port: port, data: data)

        // A graceful restart, then a kill -9: still nothing of hers, and no log segment holds her words.
        #expect(try await server.stop() == 0)
        let restarted = try await startHuddle(flags, dataDirectory: data)
        try expectAnnIsGone(ann, issuer: idp.issuer, port: restarted.port, data: data)
        try await restarted.kill9()
        let again = try await startHuddle(flags, dataDirectory: data)
        try expectAnnIsGone(ann, issuer: idp.issuer, port: again.port, data: data)
        let files = try FileManager.default.contentsOfDirectory(at: data, includingPropertiesForKeys: nil)
        for file in files where ["log", "snap"].contains(file.pathExtension) {
            let bytes = try Data(contentsOf: file)
            #expect(bytes.range(of: Data(chatText.utf8)) == nil, "\(file.lastPathComponent) still holds her words")
            #expect(bytes.range(of: Data(Self.displayName.utf8)) == nil, "\(file.lastPathComponent) still holds her display name")
        }
        #expect(try await again.stop() == 0)
    }
}
