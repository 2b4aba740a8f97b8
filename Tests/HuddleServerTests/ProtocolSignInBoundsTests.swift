import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// Issue 12, "cheap refusals first": what an anonymous client can make the server spend before
/// it signs in (password hashes, requests held behind a sign-in) is bounded and judged before
/// it is spent, logins go ahead of signups, and a login's answer does not tell which accounts
/// exist. Over real sockets against the real binary; the hash counts come from /metrics.
@Suite(.ownThread) struct ProtocolSignInBoundsTests {
    private static func hashes(_ kind: String, port: Int) throws -> Int {
        Int(try PrometheusText.fetch(port: port).value("huddle_password_hashes_total", ["kind": kind]) ?? -1)
    }


    /// Observed problem 3: a signup the rules refuse was hashed first (hundreds of
    /// milliseconds of a KDF thread each). Now every rule is judged before any hash.
    @Test func aRefusedSignupCostsNoPasswordHash() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice")
        #expect(try Self.hashes("signup", port: server.port) == 1)
        let client = try ProtocolClient(port: server.port)
        let password = ProtocolClient.password
        #expect(try client.errorCode("signup", ["username": "alice", "email": "new@example.com", "password": password]) == "username_taken")
        #expect(try client.errorCode("signup", ["username": "bob", "email": "alice@example.com", "password": password]) == "email_taken")
        #expect(try client.errorCode("signup", ["username": "1bob", "email": "bob@example.com", "password": password]) == "invalid_username")
        #expect(try client.errorCode("signup", ["username": "bob", "email": "bob", "password": password]) == "invalid_email")
        #expect(try client.errorCode("signup", ["username": "bob", "email": "bob@example.com", "password": "short"]) == "weak_password")
        #expect(try Self.hashes("signup", port: server.port) == 1, "a refused signup was hashed")
        try client.signup("bob")
        #expect(try Self.hashes("signup", port: server.port) == 2)
    }

    /// Observed problem 4: an unknown login was answered at once, a wrong password after a
    /// hash. Both now go through the KDF queue: each costs exactly one hash.
    @Test func anUnknownLoginCostsAHashLikeAWrongPassword() async throws {
        let server = try await startHuddle()
        try ProtocolClient(port: server.port).signup("alice")
        let client = try ProtocolClient(port: server.port)
        #expect(try Self.hashes("login", port: server.port) == 0)
        #expect(try client.errorCode("login", ["login": "alice", "password": "wrong password"]) == "invalid_credentials")
        #expect(try Self.hashes("login", port: server.port) == 1)
        #expect(try client.errorCode("login", ["login": "nobody", "password": "wrong password"]) == "invalid_credentials")
        #expect(try Self.hashes("login", port: server.port) == 2, "an unknown username was answered without a hash")
        #expect(try client.errorCode("login", ["login": "nobody@example.com", "password": "wrong password"]) == "invalid_credentials")
        #expect(try Self.hashes("login", port: server.port) == 3, "an unknown email was answered without a hash")
    }

    /// Observed problem 3: one address kept any number of signups hashing. Now at most 4 per
    /// address are queued or hashing; the next is refused at once with `retry_after_ms`.
    @Test func signupsBeingHashedAreBoundedPerAddress() async throws {
        // A slow KDF keeps the first four in flight while the fifth, sent right after, arrives.
        let server = try await startHuddle(["--kdf-iterations", "1000000"])
        let clients = try (0..<5).map { _ in try ProtocolClient(port: server.port, receiveTimeout: 60) }
        let neighbour = try ProtocolClient(port: server.port, receiveTimeout: 60, sourceAddress: "127.0.0.2")
        let ids = try clients.enumerated().map { index, client in
            try client.sendRequest("signup", ["username": "bulk\(index)", "email": "bulk\(index)@example.com", "password": ProtocolClient.password])
        }
        // Another address is not refused by this one's bound.
        let neighbourID = try neighbour.sendRequest("signup", ["username": "neighbour", "email": "n@example.com", "password": ProtocolClient.password])
        let replies = try zip(clients, ids).map { client, id in try client.reply(to: id) }
        let refused = replies.indices.filter { JSON.bool(replies[$0]["ok"]) != true }
        #expect(refused.count == 1, "\(replies.map { JSON.text($0) })")
        for index in refused {
            let error = replies[index]["error"] as? JSONObject
            #expect(error?["code"] as? String == "too_many_attempts", "\(JSON.text(replies[index]))")
            #expect(JSON.int(error?["retry_after_ms"]) == 1000, "\(JSON.text(replies[index]))")
            // Once the others are done, the address may sign up again.
            try clients[index].signup("bulk\(index)")
        }
        #expect(JSON.bool(try neighbour.reply(to: neighbourID)["ok"]) == true)
    }

    /// Observed problem 3: a real user's login waited behind every signup queued before it.
    /// Logins now take a free KDF thread before any waiting signup. The order the hashes
    /// finished in is read from the server's own clock: a reply's `expires_at` is the moment
    /// its hash finished plus the session lifetime, the same for all. So no client-side timing
    /// is judged: most signups sent before the login finish after it.
    @Test func aLoginGoesAheadOfSignupsQueuedBeforeIt() async throws {
        let server = try await startHuddle(["--kdf-iterations", "600000"])
        try ProtocolClient(port: server.port, receiveTimeout: 120).signup("alice")
        // Twenty signups from five addresses (four each, the per-address bound), then the login,
        // all sent without waiting: the login reaches the core while the signups wait.
        let clients = try (2...6).flatMap { address in
            try (0..<4).map { _ in try ProtocolClient(port: server.port, receiveTimeout: 120, sourceAddress: "127.0.0.\(address)") }
        }
        let user = try ProtocolClient(port: server.port, receiveTimeout: 120)
        let ids = try clients.enumerated().map { index, client in
            try client.sendRequest("signup", ["username": "bulk\(index)", "email": "bulk\(index)@example.com", "password": ProtocolClient.password])
        }
        let loginID = try user.sendRequest("login", ["login": "alice", "password": ProtocolClient.password])
        func finished(_ reply: JSONObject) throws -> Int {
            try #require(JSON.int((reply["result"] as? JSONObject)?["expires_at"]), "\(JSON.text(reply))")
        }
        let login = try finished(try user.reply(to: loginID))
        let signups = try zip(clients, ids).map { client, id in try finished(try client.reply(to: id)) }
        let after = signups.filter { $0 > login }.count
        #expect(after >= 10, "only \(after) of 20 signups sent before the login finished after it")
    }

    /// Observed problem 5: requests pipelined behind a sign-in still being decided were held
    /// decompressed without a byte bound. Now 64 KiB per connection; past it a request is
    /// refused (`signing_in`), and what was held runs once the sign-in is decided.
    @Test func requestsHeldBehindASignInAreBoundedInBytes() async throws {
        // A slow KDF keeps the login undecided while the batch behind it arrives.
        let server = try await startHuddle(["--kdf-iterations", "1000000"])
        try ProtocolClient(port: server.port, receiveTimeout: 60).signup("alice")
        let client = try ProtocolClient(port: server.port, receiveTimeout: 60)
        let data = String(repeating: "x", count: 16_000)
        let batch: [(String, JSONObject)] = [("login", ["login": "alice", "password": ProtocolClient.password])]
            + (0..<6).map { _ in ("publish", ["channel": "room:lobby", "data": data] as JSONObject) }
            + [("whoami", [:])]
        let ids = try client.sendBatch(batch)
        let codes = try ids.map { id -> String in
            let reply = try client.reply(to: id)
            return JSON.bool(reply["ok"]) == true ? "ok" : ((reply["error"] as? JSONObject)?["code"] as? String ?? "?")
        }
        // Four publishes of ~16 KB fit in 64 KiB, the fifth and sixth do not; a small whoami does.
        #expect(codes == ["ok", "ok", "ok", "ok", "ok", "signing_in", "signing_in", "ok"], "\(codes)")
        let metrics = try PrometheusText.fetch(port: server.port)
        #expect(metrics.value("huddle_signin_held_bytes") == 0, "held bytes are given back once the sign-in is decided")
        #expect(metrics.value("huddle_errors_total", ["code": "signing_in"]) == 2)
    }

    /// Observed problem 5 as it was seen: compressed frames of a few hundred bytes that each
    /// inflate to ~60 KiB, pipelined behind a login. One is held; the rest are refused rather
    /// than pinned decompressed.
    @Test func compressedRequestsBehindASignInAreBoundedByTheirInflatedSize() async throws {
        let server = try await startHuddle(["--kdf-iterations", "1000000"])
        try ProtocolClient(port: server.port, receiveTimeout: 60).signup("alice")
        let client = try ProtocolClient(port: server.port, extraHeaders: ["Sec-WebSocket-Extensions: permessage-deflate"], receiveTimeout: 60)
        let loginID = try client.sendRequest("login", ["login": "alice", "password": ProtocolClient.password])
        let deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: true)
        let ids = (1...10).map { "big\($0)" }
        for id in ids {
            let text = #"{"id":"\#(id)","op":"ping","pad":""# + String(repeating: " ", count: 60_000) + "\"}"
            let deflated = deflater.compress(Array(text.utf8))
            #expect(deflated.count < 1000)
            try client.raw.sendFrame(.text, deflated, rsv1: true)
        }
        // Replies of 128 bytes and more come compressed: read frames off the socket.
        let frames = RawFrames(fd: client.raw.fd)
        let inflater = PerMessageInflater(windowBits: 15, noContextTakeover: true)
        var replies: [(id: String, code: String)] = []
        while replies.count < ids.count + 1 {
            let frame = try frames.next()
            let text = frame.header == 0xC1 ? try inflater.inflate(frame.payload, maxSize: 1 << 20) : frame.payload
            let reply = try #require(try JSON.parse(String(decoding: text, as: UTF8.self)) as? JSONObject)
            let code = JSON.bool(reply["ok"]) == true ? "ok" : ((reply["error"] as? JSONObject)?["code"] as? String ?? "?")
            replies.append((reply["id"] as? String ?? "null", code))
        }
        #expect(replies.map(\.id) == [loginID] + ids, "replies in request order")
        #expect(replies.map(\.code) == ["ok", "ok"] + Array(repeating: "signing_in", count: 9), "\(replies)")
    }

    /// A connection stays signed in only as long as its session: at `expires_at` it is closed
    /// with 4001, as if the token had been revoked.
    @Test func aConnectionIsClosedWhenItsSessionExpires() async throws {
        let server = try await startHuddle(["--session-ttl", "1"])
        let client = try ProtocolClient(port: server.port)
        try client.signup("alice")
        #expect(try client.closeCode(timeout: 10) == WebSocketCloseCode(rawValue: 4001))
    }
}
