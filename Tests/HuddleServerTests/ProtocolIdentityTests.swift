import ChildProcessExit
import Foundation
import HuddleClient
import HuddleCrypto
import HuddleProtocol
import JWTTestSupport
import Testing

/// protocol.md "Identities": sign-in with an OpenID Connect ID token (keys from a JWKS a local
/// test issuer serves over HTTP), linked identities, and app-backend tokens, over real sockets
/// against the real binary, with every refusal, across a graceful restart and a kill -9.
@Suite(.ownThread) struct ProtocolIdentityTests {
    static let audience = "huddle-test-app"
    static let rsa = TestSigningKey(.rsa, keyID: "rsa-1")
    static let ec = TestSigningKey(.p256, keyID: "ec-1")
    static let secret = Array("the app backend's shared HS256 secret!".utf8)

    /// An ID token's claims; times in seconds from now.
    static func claims(
        issuer: String, subject: String, audience: String = audience, expiresIn: Int = 600, issuedAgo: Int = 5, nonce: String? = nil,
        email: String? = nil, verified: Bool = true, preferred: String? = nil
    ) -> String {
        let now = Int(Date().timeIntervalSince1970)
        var members: JSONObject = ["iss": issuer, "sub": subject, "aud": audience, "exp": now + expiresIn, "iat": now - issuedAgo]
        if let nonce { members["nonce"] = nonce }
        if let email { members["email"] = email; members["email_verified"] = verified }
        if let preferred { members["preferred_username"] = preferred }
        return JSON.text(members)
    }

    static func issuerServer(_ name: String = "https://idp.test", keys: [TestSigningKey] = [rsa, ec]) throws -> JWKSServer {
        try JWKSServer(issuer: name, keys: keys)
    }

    @Test func anIDTokenMakesAnAccountOnceAndSignsIntoItAfter() async throws {
        let idp = try Self.issuerServer()
        defer { idp.stop() }
        let server = try await startHuddle(["--oidc-issuer", idp.flag(audience: Self.audience)])
        try await server.waitForLog("identity=on (oidc https://idp.test aud huddle-test-app jwks \(idp.url))")
        let first = try ProtocolClient(port: server.port)
        let token = Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "g-123", email: "Ann@Example.com", preferred: "Ann.B"))
        let made = try first.ok("identity_signin", ["token": token, "device": "ann's phone"])
        #expect((made["user"] as? JSONObject)?["username"] as? String == "annb", "proposed from preferred_username")
        #expect((made["user"] as? JSONObject)?["email"] as? String == "ann@example.com", "the verified email")
        let session = try #require(made["token"] as? String)
        #expect(try first.ok("whoami")["user"] != nil)
        // ES256, the same identity: the same account, a new session.
        let again = try ProtocolClient(port: server.port)
        let signedIn = try again.ok("identity_signin", ["token": Self.ec.sign(Self.claims(issuer: idp.issuer, subject: "g-123")), "username": "ignored"])
        #expect((signedIn["user"] as? JSONObject)?["username"] as? String == "annb")
        #expect(signedIn["token"] as? String != session)
        let listed = try again.ok("identities")["identities"] as? [JSONObject]
        #expect(listed?.map { $0["subject"] as? String } == ["g-123"])
        #expect(listed?.first?["issuer"] as? String == idp.issuer)
        // A password login to a passwordless account fails like a wrong password.
        #expect(try ProtocolClient(port: server.port).errorCode("login", ["login": "annb", "password": ProtocolClient.password]) == "invalid_credentials")
        // An unverified email is not taken; a chosen username is.
        let bob = try ProtocolClient(port: server.port).ok(
            "identity_signin", ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "g-456", email: "bob@example.com", verified: false)), "username": "Bob"])
        #expect((bob["user"] as? JSONObject)?["username"] as? String == "bob")
        #expect((bob["user"] as? JSONObject)?["email"] as? String == "")
        let metrics = try PrometheusText.fetch(port: server.port)
        #expect(metrics.value("huddle_identity_verifications_total", ["kind": "id_token", "outcome": "verified"]) == 3)
        #expect(idp.downloads == 1, "the keys are cached")
    }

    @Test func everyBadTokenIsRefusedPreciselyAndLoggedWithoutTheToken() async throws {
        let idp = try Self.issuerServer()
        let foreign = try Self.issuerServer("https://other-idp.test")
        defer { idp.stop(); foreign.stop() }
        let server = try await startHuddle(["--oidc-issuer", idp.flag(audience: Self.audience), "--oidc-issuer", foreign.flag(audience: "someone-else")])
        let client = try ProtocolClient(port: server.port)
        func code(_ token: String, _ fields: JSONObject = [:]) throws -> String? {
            try client.errorCode("identity_signin", fields.merging(["token": token, "username": "carol"]) { first, _ in first })
        }
        let stranger = TestSigningKey(.rsa, keyID: "rsa-1")
        let cases: [(String, String, JSONObject)] = [
            ("identity_token_expired", Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "s", expiresIn: -300)), [:]),
            ("identity_token_expired", Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "s", issuedAgo: -600)), [:]),
            ("wrong_audience", Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "s", audience: "someone-else")), [:]),
            ("wrong_audience", Self.rsa.sign(Self.claims(issuer: foreign.issuer, subject: "s")), [:]),
            ("unknown_issuer", Self.rsa.sign(Self.claims(issuer: "https://evil.test", subject: "s")), [:]),
            ("invalid_identity_token", stranger.sign(Self.claims(issuer: idp.issuer, subject: "s")), [:]),
            ("unknown_key", stranger.sign(Self.claims(issuer: idp.issuer, subject: "s"), keyID: "not-published"), [:]),
            ("invalid_identity_token", Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "s"), algorithm: "none"), [:]),
            ("invalid_identity_token", TestSigningKey.hs256(Self.claims(issuer: idp.issuer, subject: "s"), secret: Array(Self.rsa.publicKeyPEM.utf8), keyID: "rsa-1"), [:]),
            ("invalid_identity_token", "not.a.token", [:]),
            ("invalid_identity_token", String(repeating: "a", count: 9000), [:]),
            ("invalid_identity_token", Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "s", nonce: "n-1")), ["nonce": "n-2"]),
            ("invalid_identity_token", Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "s", nonce: String(repeating: "n", count: 257))), [:]),
        ]
        for (expected, token, fields) in cases {
            #expect(try code(token, fields) == expected, "\(expected)")
        }
        #expect(try client.errorCode("whoami") == "not_authenticated", "no refusal signs in")
        // A nonce is spent once.
        let withNonce = Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "dave", nonce: "n-9"))
        _ = try ProtocolClient(port: server.port).ok("identity_signin", ["token": withNonce, "nonce": "n-9", "username": "dave"])
        #expect(try ProtocolClient(port: server.port).errorCode("identity_signin", ["token": withNonce, "nonce": "n-9"]) == "nonce_reused")
        // A clash names the way out.
        let clash = try ProtocolClient(port: server.port).failure(
            "identity_signin", ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "other")), "username": "dave"])
        #expect(clash["code"] as? String == "username_taken")
        #expect((clash["message"] as? String)?.contains("identity_link") == true)
        try await server.waitForLog("code=unknown_key")
        try await server.waitForLog("code=nonce_reused")
        let log = server.logText
        #expect(log.contains("identity token refused"))
        #expect(!log.contains(withNonce) && !log.contains(String(withNonce.split(separator: ".")[1])), "a token is never logged")
    }

    /// protocol.md "Limits", spent ID-token nonces: one identity signing in again and again with
    /// fresh nonces meets its own bound, not the server's, so others still sign in.
    @Test func anIdentityAtItsSpentNonceBoundHoldsUpNobodyElse() async throws {
        let idp = try Self.issuerServer()
        defer { idp.stop() }
        let server = try await startHuddle(["--oidc-issuer", idp.flag(audience: Self.audience)])
        func signIn(_ subject: String, nonce: String) -> [String: Any] {
            ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: subject, nonce: nonce)), "nonce": nonce, "username": subject]
        }
        for index in 0..<20 { _ = try ProtocolClient(port: server.port).ok("identity_signin", signIn("eve", nonce: "eve-\(index)")) }
        let refused = try ProtocolClient(port: server.port).failure("identity_signin", signIn("eve", nonce: "eve-20"))
        #expect(refused["code"] as? String == "too_many_attempts")
        let wait = try #require(JSON.int(refused["retry_after_ms"]))
        #expect(wait > 0 && wait <= 660_000, "until eve's oldest token expires")
        // Another identity's first and later sign-ins go on.
        _ = try ProtocolClient(port: server.port).ok("identity_signin", signIn("fay", nonce: "fay-0"))
        _ = try ProtocolClient(port: server.port).ok("identity_signin", signIn("fay", nonce: "fay-1"))
        let metrics = try PrometheusText.fetch(port: server.port)
        #expect(metrics.value("huddle_errors_total", ["code": "too_many_attempts"]) == 1)
    }

    @Test func aRotatedKeyIsPickedUpAndUnknownKeyIdsCannotHammerTheIssuer() async throws {
        let idp = try Self.issuerServer(keys: [Self.rsa])
        let throttled = try Self.issuerServer("https://slow-idp.test", keys: [Self.rsa])
        defer { idp.stop(); throttled.stop() }
        let rotated = TestSigningKey(.p256, keyID: "ec-2026")
        let server = try await startHuddle([
            "--oidc-issuer", idp.flag(audience: Self.audience), "--oidc-issuer", throttled.flag(audience: Self.audience),
            "--oidc-key-refresh-interval", "0",
        ])
        _ = try ProtocolClient(port: server.port).ok("identity_signin", ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "e1")), "username": "erin"])
        #expect(try ProtocolClient(port: server.port).errorCode("identity_signin", ["token": rotated.sign(Self.claims(issuer: idp.issuer, subject: "e1"))]) == "unknown_key")
        idp.publish([Self.rsa, rotated])
        let after = try ProtocolClient(port: server.port).ok("identity_signin", ["token": rotated.sign(Self.claims(issuer: idp.issuer, subject: "e1"))])
        #expect((after["user"] as? JSONObject)?["username"] as? String == "erin")
        try await server.stop()

        // With the default interval, a burst of made-up key ids costs the issuer nothing more.
        let limited = try await startHuddle(["--oidc-issuer", throttled.flag(audience: Self.audience)])
        let client = try ProtocolClient(port: limited.port)
        _ = try client.ok("identity_signin", ["token": Self.rsa.sign(Self.claims(issuer: throttled.issuer, subject: "f1")), "username": "fay"])
        let downloads = throttled.downloads
        for index in 0..<20 {
            #expect(try ProtocolClient(port: limited.port).errorCode("identity_signin", ["token": Self.rsa.sign(Self.claims(issuer: throttled.issuer, subject: "f1"), keyID: "made-up-\(index)")]) == "unknown_key")
        }
        #expect(throttled.downloads == downloads, "no reload within the refresh interval")
        #expect(try PrometheusText.fetch(port: limited.port).value("huddle_identity_key_refreshes_total", ["outcome": "rate_limited"]) == 20)
    }

    @Test func theSettingsShowWithTheSecretMaskedAndBadKeysStopTheStart() throws {
        let issuers = ["issuer=https://a.test;audience=x;jwks=https://a.test/keys", "issuer=https://b.test;audience=y,z;jwks=https://b.test/keys"]
        let config = try ServeSettingsTests.printedConfig(
            ["--oidc-issuer", issuers[0], "--oidc-issuer", issuers[1]], environment: ["HUDDLE_APP_TOKEN_SECRET": "an env secret of thirty-two bytes or more"])
        #expect(config["oidc-issuer"] as? [String] == issuers)
        #expect(config["app-token-secret"] as? String == "********")
        let data = ServeFlagTests.untouchedDataDirectory()
        for (arguments, complaint) in [
            (["--app-token-secret", "too short"], "at least 32 bytes"),
            (["--oidc-issuer", "issuer=https://a.test;jwks=https://a.test/keys"], "audience="),
            (["--oidc-issuer", "issuer=https://a.test;audience=x;jwks=/nonexistent/jwks.json"], "cannot read the JWKS file"),
            (["--oidc-issuer", "issuer=https://a.test;audience=x;jwks=http://a.test/keys;ca=/tmp/ca.pem"], "ca= is for an https://"),
            (["--app-token-public-key", "/nonexistent.pem"], "cannot read"),
            (["--app-token-audience", "huddle"], "need an app-token secret"),
        ] {
            let result = try runChildToCompletion(ServerProcess.binary.path, arguments + ["--data-dir", data.path], timeout: 60)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.output.contains(complaint), "\(result.output)")
        }
        #expect(!FileManager.default.fileExists(atPath: data.path))
    }

    @Test func anHTTPSKeySetIsCheckedAgainstTheIssuersCA() async throws {
        let certificates = try TestCertificates.shared.get()
        let idp = try JWKSServer(issuer: "https://tls-idp.test", keys: [Self.rsa], tls: certificates)
        defer { idp.stop() }
        let server = try await startHuddle(["--oidc-issuer", idp.flag(audience: Self.audience) + ";ca=\(certificates.caCertificate.path)"])
        let token = Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "t-1"))
        _ = try ProtocolClient(port: server.port).ok("identity_signin", ["token": token, "username": "tess"])
        #expect(idp.downloads == 1)
        // The system store does not trust the test CA: the keys cannot be loaded, and it says so.
        let untrusting = try await startHuddle(["--oidc-issuer", idp.flag(audience: Self.audience)])
        let refusal = try ProtocolClient(port: untrusting.port).failure("identity_signin", ["token": token])
        #expect(refusal["code"] as? String == "unknown_key")
        #expect((refusal["message"] as? String)?.contains("cannot be loaded") == true, "\(refusal)")
    }

    @Test func identitiesLinkToAPasswordAccountAndTheLastWayToSignInStays() async throws {
        let idp = try Self.issuerServer()
        defer { idp.stop() }
        let server = try await startHuddle(["--oidc-issuer", idp.flag(audience: Self.audience)])
        let (gus, _) = try ProtocolClient.signedUp("gus", port: server.port)
        #expect(try ProtocolClient(port: server.port).errorCode("identity_link", ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "x"))]) == "not_authenticated")
        let linked = try gus.ok("identity_link", ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "gus-google"))])
        #expect((linked["identities"] as? [JSONObject])?.count == 1)
        _ = try gus.ok("identity_link", ["token": Self.ec.sign(Self.claims(issuer: idp.issuer, subject: "gus-apple"))])
        let viaIdentity = try ProtocolClient(port: server.port).ok("identity_signin", ["token": Self.ec.sign(Self.claims(issuer: idp.issuer, subject: "gus-google"))])
        #expect((viaIdentity["user"] as? JSONObject)?["username"] as? String == "gus")
        // Another account cannot take it; an identity-only account keeps its last one.
        let hal = try ProtocolClient(port: server.port)
        _ = try hal.ok("identity_signin", ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "hal-1")), "username": "hal"])
        #expect(try hal.errorCode("identity_link", ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "gus-google"))]) == "identity_taken")
        #expect(try hal.errorCode("identity_unlink", ["issuer": idp.issuer, "subject": "hal-1"]) == "last_sign_in_method")
        #expect(try hal.errorCode("identity_unlink", ["issuer": idp.issuer, "subject": "gus-google"]) == "identity_not_found")
        let left = try gus.ok("identity_unlink", ["issuer": idp.issuer, "subject": "gus-google"])
        #expect((left["identities"] as? [JSONObject])?.map { $0["subject"] as? String } == ["gus-apple"])
        _ = try gus.ok("identity_unlink", ["issuer": idp.issuer, "subject": "gus-apple"])  // gus has a password
        for code in ["identity_taken", "last_sign_in_method", "identity_not_found"] { try await server.waitForLog("code=\(code)") }
        // Free again: it now makes an account of its own.
        let freed = try ProtocolClient(port: server.port).ok("identity_signin", ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "gus-google")), "username": "gus2"])
        #expect((freed["user"] as? JSONObject)?["username"] as? String == "gus2")
    }

    @Test func appTokensSignInWithHS256RS256AndES256() async throws {
        let secretFile = FileManager.default.temporaryDirectory.appendingPathComponent("app-secret-\(UUID().uuidString)")
        try Data(Self.secret).write(to: secretFile)
        defer { try? FileManager.default.removeItem(at: secretFile) }
        let now = Int(Date().timeIntervalSince1970)
        let hs = try await startHuddle(["--app-token-secret-file", secretFile.path, "--app-token-audience", "huddle"])
        let token = TestSigningKey.hs256(JSON.text(["sub": "ivy", "aud": "huddle", "exp": now + 600]), secret: Self.secret)
        let made = try ProtocolClient(port: hs.port).ok("app_auth", ["token": token])
        #expect((made["user"] as? JSONObject)?["username"] as? String == "ivy")
        #expect(made["token"] is String)
        let again = try ProtocolClient(port: hs.port).ok("app_auth", ["token": token])
        #expect((again["user"] as? JSONObject)?["username"] as? String == "ivy")
        let client = try ProtocolClient(port: hs.port)
        var wrong = Self.secret
        wrong[0] ^= 1
        #expect(try client.errorCode("app_auth", ["token": TestSigningKey.hs256(JSON.text(["sub": "ivy", "aud": "huddle"]), secret: wrong)]) == "invalid_identity_token")
        #expect(try client.errorCode("app_auth", ["token": TestSigningKey.hs256(JSON.text(["sub": "ivy", "aud": "huddle", "exp": now - 600]), secret: Self.secret)]) == "identity_token_expired")
        #expect(try client.errorCode("app_auth", ["token": TestSigningKey.hs256(JSON.text(["sub": "ivy", "aud": "other"]), secret: Self.secret)]) == "wrong_audience")
        #expect(try client.errorCode("app_auth", ["token": TestSigningKey.hs256(JSON.text(["sub": "no such name!", "aud": "huddle"]), secret: Self.secret)]) == "invalid_username")
        #expect(try client.errorCode("app_auth", ["token": Self.rsa.sign(JSON.text(["sub": "ivy"]))]) == "invalid_identity_token")
        #expect(try client.errorCode("identity_signin", ["token": token]) == "unknown_issuer", "no OIDC issuer is configured here")
        try await hs.stop()
        for signer in [Self.rsa, Self.ec] {
            let pem = FileManager.default.temporaryDirectory.appendingPathComponent("app-key-\(UUID().uuidString).pem")
            try Data(signer.publicKeyPEM.utf8).write(to: pem)
            defer { try? FileManager.default.removeItem(at: pem) }
            let server = try await startHuddle(["--app-token-public-key", pem.path, "--app-token-issuer", "https://backend.test"])
            let signed = signer.sign(JSON.text(["sub": "jo_\(signer.algorithm.lowercased())", "iss": "https://backend.test", "exp": now + 600]))
            let result = try ProtocolClient(port: server.port).ok("app_auth", ["token": signed])
            #expect((result["user"] as? JSONObject)?["username"] as? String == "jo_\(signer.algorithm.lowercased())")
            #expect(try ProtocolClient(port: server.port).errorCode("app_auth", ["token": signer.sign(JSON.text(["sub": "jo", "iss": "https://other.test"]))]) == "unknown_issuer")
            #expect(try ProtocolClient(port: server.port).errorCode("app_auth", ["token": TestSigningKey.hs256(JSON.text(["sub": "jo"]), secret: Array(signer.publicKeyPEM.utf8))]) == "invalid_identity_token")
            try await server.stop()
        }
    }

    /// HuddleClient's identity calls against the real server: the session they open is the one
    /// the client resumes.
    @Test func theSwiftClientSignsInLinksAndUnlinks() async throws {
        let idp = try Self.issuerServer()
        defer { idp.stop() }
        let server = try await startHuddle(["--oidc-issuer", idp.flag(audience: Self.audience), "--app-token-secret", String(decoding: Self.secret, as: UTF8.self)])
        let client = try await ClientHarness(url: server.url)
        let idToken = Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "m-1", nonce: "cn"))
        let session = try await client.ok("identity_signin") { $0.signIn(idToken: idToken, nonce: "cn", username: "mia", completion: $1) }
        #expect(session.user.username == "mia" && session.token != nil)
        #expect(await client.run { $0.token } == session.token)
        let linked = try await client.ok("identity_link") { $0.linkIdentity(idToken: Self.ec.sign(Self.claims(issuer: idp.issuer, subject: "m-2")), completion: $1) }
        #expect(linked.map(\.subject) == ["m-1", "m-2"])
        #expect(try await client.ok("identities") { $0.identities(completion: $1) }.count == 2)
        #expect(try await client.ok("identity_unlink") { $0.unlinkIdentity(issuer: idp.issuer, subject: "m-1", completion: $1) }.map(\.subject) == ["m-2"])
        #expect(try await client.failure { $0.unlinkIdentity(issuer: idp.issuer, subject: "m-2", completion: $1) }.serverCode == "last_sign_in_method")
        let app = try await ClientHarness(url: server.url)
        let appToken = TestSigningKey.hs256(JSON.text(["sub": "ned", "exp": Int(Date().timeIntervalSince1970) + 600]), secret: Self.secret)
        #expect(try await app.ok("app_auth") { $0.signIn(appToken: appToken, completion: $1) }.user.username == "ned")
        client.shutDown()
        app.shutDown()
    }

    @Test(arguments: [false, true])
    func identitiesAndSpentNoncesSurviveARestart(kill9: Bool) async throws {
        let idp = try Self.issuerServer()
        defer { idp.stop() }
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let arguments = ["--oidc-issuer", idp.flag(audience: Self.audience)]
        let server = try await startHuddle(arguments, dataDirectory: data, fsync: "always")
        let used = Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "kim-1", nonce: "once"))
        _ = try ProtocolClient(port: server.port).ok("identity_signin", ["token": used, "nonce": "once", "username": "kim"])
        let (lee, _) = try ProtocolClient.signedUp("lee", port: server.port)
        _ = try lee.ok("identity_link", ["token": Self.ec.sign(Self.claims(issuer: idp.issuer, subject: "lee-1"))])
        // pat spends the 20 nonces one identity may hold at once.
        func patSignIn(_ index: Int) -> [String: Any] {
            ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "pat-1", nonce: "pat-\(index)")), "nonce": "pat-\(index)", "username": "pat"]
        }
        for index in 0..<20 { _ = try ProtocolClient(port: server.port).ok("identity_signin", patSignIn(index)) }
        if kill9 { try await server.kill9() } else { try await server.stop() }
        let restarted = try await startHuddle(arguments, dataDirectory: data, fsync: "always")
        defer { Task { try? await restarted.stop() } }
        #expect(try ProtocolClient(port: restarted.port).errorCode("identity_signin", ["token": used, "nonce": "once"]) == "nonce_reused")
        let kimClient = try ProtocolClient(port: restarted.port)
        let kim = try kimClient.ok("identity_signin", ["token": Self.ec.sign(Self.claims(issuer: idp.issuer, subject: "kim-1"))])
        #expect((kim["user"] as? JSONObject)?["username"] as? String == "kim")
        // kim's identity is still her only way to sign in; pat's nonces still count.
        #expect(try kimClient.errorCode("identity_unlink", ["issuer": idp.issuer, "subject": "kim-1"]) == "last_sign_in_method")
        #expect(try ProtocolClient(port: restarted.port).errorCode("identity_signin", patSignIn(20)) == "too_many_attempts")
        let lees = try ProtocolClient(port: restarted.port).ok("identity_signin", ["token": Self.rsa.sign(Self.claims(issuer: idp.issuer, subject: "lee-1"))])
        #expect((lees["user"] as? JSONObject)?["username"] as? String == "lee")
    }
}
