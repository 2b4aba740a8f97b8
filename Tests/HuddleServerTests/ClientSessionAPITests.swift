import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import Testing

/// HuddleClient's typed API for every op group of protocol.md, against the real server.
@Suite(.ownThread) struct ClientSessionAPITests {
    private func signedUp(_ name: String, server: ServerProcess) async throws -> (ClientHarness, HuddleSession) {
        let client = try await ClientHarness(url: server.url)
        let session = try await client.ok("signup") {
            $0.signUp(username: name, email: "\(name)@example.com", password: testPassword, completion: $1)
        }
        return (client, session)
    }

    @Test func accounts() async throws {
        let server = try await startHuddle()
        let anonymous = try await ClientHarness(url: server.url)
        try await anonymous.waitUntilConnected()
        #expect(anonymous.count { $0 == .connected(user: nil) } == 1)
        let time = try await anonymous.ok("ping") { $0.ping(completion: $1) }
        #expect(abs(time - Int64(Date().timeIntervalSince1970 * 1000)) < 60_000)
        #expect(try await anonymous.failure { $0.whoami(completion: $1) }.serverCode == "not_authenticated")

        let (alice, session) = try await signedUp("alice", server: server)
        #expect(session.user == HuddleUser(username: "alice", email: "alice@example.com"))
        let token = try #require(session.token)
        #expect(token.count == 43 && session.expiresAt > 0)
        #expect(await alice.run { $0.token } == token)
        #expect(await alice.run { $0.user?.username } == "alice")
        let me = try await alice.ok("whoami") { $0.whoami(completion: $1) }
        #expect(me.user.username == "alice" && me.token == nil)
        #expect(try await anonymous.failure {
            $0.signUp(username: "alice", email: "other@example.com", password: testPassword, completion: $1)
        }.serverCode == "username_taken")
        #expect(try await anonymous.failure { $0.logIn(login: "alice", password: "wrong password", completion: $1) }.serverCode == "invalid_credentials")

        // login by email, then auth with its token on another anonymous client.
        let byEmail = try await anonymous.ok("login") { $0.logIn(login: "alice@example.com", password: testPassword, completion: $1) }
        let other = try await ClientHarness(url: server.url)
        let authed = try await other.ok("auth") { $0.authenticate(token: byEmail.token ?? "", completion: $1) }
        #expect(authed.user.username == "alice" && authed.token == byEmail.token)
        #expect(await other.run { $0.token } == byEmail.token)

        // logout: the session ends, the client comes back anonymous on its own.
        let revoked = try await alice.ok("logout") { $0.logOut(completion: $1) }
        #expect(revoked == 1)
        try await alice.waitFor("an anonymous reconnect") { $0.contains(.connected(user: nil)) }
        #expect(await alice.run { $0.token } == nil)
        #expect(await alice.run { $0.user } == nil)
        #expect(try await alice.failure { $0.whoami(completion: $1) }.serverCode == "not_authenticated")
        #expect(!alice.events.contains { $0.stopReason != nil }, "a logout is not a refusal")
    }

    @Test func accountDeletion() async throws {
        let server = try await startHuddle()
        let (alice, _) = try await signedUp("alice", server: server)
        #expect(try await alice.failure { $0.deleteAccount(password: "wrong password", completion: $1) }.serverCode == "invalid_credentials")
        try await alice.ok("account_delete") { $0.deleteAccount(password: testPassword, completion: $1) }
        try await alice.waitFor("an anonymous reconnect") { $0.contains(.connected(user: nil)) }
        #expect(await alice.run { $0.token } == nil)
        #expect(!alice.events.contains { $0.stopReason != nil }, "a deletion is not a refusal")
    }

    @Test func channels() async throws {
        let server = try await startHuddle()
        let (alice, _) = try await signedUp("alice", server: server)
        let (bob, _) = try await signedUp("bob", server: server)
        let room = "room:api"
        let subscribed = try await bob.ok("subscribe") { $0.subscribe(room, completion: $1) }
        #expect(subscribed.offset == 0 && subscribed.epoch == "" && subscribed.recovered == nil)
        #expect(try await alice.ok("subscribe") { $0.subscribe(room, completion: $1) }.channel == room)

        let first = try await alice.ok("publish") { $0.publish(room, data: .object([("text", .string("one"))]), completion: $1) }
        #expect(first.offset == 1 && !first.duplicate)
        let retried = try await alice.ok("publish") { $0.publish(room, data: .string("two"), type: "note", clientID: "m-2", completion: $1) }
        let again = try await alice.ok("publish") { $0.publish(room, data: .string("two"), type: "note", clientID: "m-2", completion: $1) }
        #expect(retried.offset == 2 && again.offset == 2 && again.duplicate && again.time == retried.time)
        _ = try await alice.ok("publish") { $0.publish(room, data: .integer(3), completion: $1) }

        try await bob.waitFor("three publications") { _ in bob.publications(on: room).count >= 3 }
        let delivered = bob.publications(on: room)
        #expect(delivered.map(\.offset) == [1, 2, 3], "each once, in order")
        #expect(delivered[0].from == "alice" && delivered[0].data == .object([("text", .string("one"))]) && delivered[0].clientID != nil)
        #expect(delivered[1].type == "note" && delivered[1].clientID == "m-2" && delivered[2].clientID != delivered[0].clientID)
        try await alice.waitFor("its own three") { _ in alice.publications(on: room).count >= 3 }
        #expect(alice.publications(on: room).map(\.offset) == [1, 2, 3], "the publisher receives its own")

        let page = try await bob.ok("history") { $0.history(room, limit: 2, completion: $1) }
        #expect(page.publications.map(\.offset) == [3, 2] && page.nextBefore == 2 && page.offset == 3)
        let older = try await bob.ok("history") { $0.history(room, before: 2, completion: $1) }
        #expect(older.publications.map(\.offset) == [1] && older.nextBefore == nil)
        #expect(older.publications[0].channel == room && older.publications[0].epoch == delivered[0].epoch)
        #expect(try await bob.ok("presence") { $0.presence(room, completion: $1) } == ["alice", "bob"])
        #expect(try await bob.failure { $0.history("inbox:alice", completion: $1) }.serverCode == "forbidden")
        #expect(try await bob.failure { $0.subscribe("nowhere", completion: $1) }.serverCode == "invalid_channel")
        #expect(await bob.run { $0.subscriptions.map(\.channel) } == [room], "a refused subscribe is not tracked")

        // Unsubscribed: nothing more is delivered.
        try await bob.ok("unsubscribe") { $0.unsubscribe(room, completion: $1) }
        _ = try await alice.ok("publish") { $0.publish(room, data: .integer(4), completion: $1) }
        try await alice.waitFor("its own fourth") { _ in alice.publications(on: room).count == 4 }
        #expect(bob.publications(on: room).count == 3)

        // A third client resumes from offset 2: offsets 3 and 4 arrive as events before the result.
        let (carol, _) = try await signedUp("carol", server: server)
        let resumed = try await carol.ok("subscribe") {
            $0.subscribe(room, since: Position(epoch: delivered[0].epoch, offset: 2), completion: $1)
        }
        #expect(resumed.recovered == true && resumed.delivered == 2 && resumed.offset == 4)
        #expect(carol.publications(on: room).map(\.offset) == [3, 4])
    }

    @Test func friends() async throws {
        let server = try await startHuddle()
        let (alice, _) = try await signedUp("alice", server: server)
        let (bob, _) = try await signedUp("bob", server: server)
        let (carol, _) = try await signedUp("carol", server: server)
        for (client, name) in [(alice, "alice"), (bob, "bob"), (carol, "carol")] {
            _ = try await client.ok("inbox") { $0.subscribe("inbox:\(name)", completion: $1) }
        }
        #expect(try await alice.ok("search") { $0.searchUsers(prefix: "B", completion: $1) } == ["bob"])
        #expect(try await alice.failure { $0.searchUsers(prefix: "", completion: $1) }.serverCode == "bad_request")
        #expect(try await alice.ok("request") { $0.sendFriendRequest(to: "bob", message: "coffee?", completion: $1) } == .requested)
        #expect(try await alice.failure { $0.sendFriendRequest(to: "bob", completion: $1) }.serverCode == "already_requested")
        #expect(try await alice.failure { $0.sendFriendRequest(to: "nobody", completion: $1) }.serverCode == "user_not_found")
        let waiting = try await bob.ok("requests") { $0.friendRequests(completion: $1) }
        #expect(waiting.incoming.map(\.user) == ["alice"] && waiting.incoming[0].message == "coffee?" && waiting.outgoing.isEmpty)
        try await bob.ok("accept") { $0.acceptFriendRequest(from: "alice", completion: $1) }
        #expect(try await alice.ok("friends") { $0.friends(completion: $1) } == [Friend(username: "bob", online: true)])

        // carol asks alice, who declines; carol asks again and withdraws; bob and carol cross requests.
        _ = try await carol.ok("request") { $0.sendFriendRequest(to: "alice", completion: $1) }
        try await alice.ok("decline") { $0.declineFriendRequest(from: "carol", completion: $1) }
        #expect(try await alice.failure { $0.acceptFriendRequest(from: "carol", completion: $1) }.serverCode == "no_request")
        _ = try await carol.ok("request") { $0.sendFriendRequest(to: "alice", completion: $1) }
        try await carol.ok("cancel") { $0.cancelFriendRequest(to: "alice", completion: $1) }
        _ = try await bob.ok("request") { $0.sendFriendRequest(to: "carol", completion: $1) }
        #expect(try await carol.ok("crossed") { $0.sendFriendRequest(to: "bob", completion: $1) } == .friends)
        try await alice.ok("remove") { $0.removeFriend("bob", completion: $1) }
        #expect(try await alice.failure { $0.removeFriend("bob", completion: $1) }.serverCode == "not_friends")

        // Every change reached the inboxes as typed notices.
        let expectedForAlice: [InboxNotice] = [
            .friendRequest(from: "alice", to: "bob", message: "coffee?"),
            .friendAccepted(from: "alice", to: "bob"),
            .friendRequest(from: "carol", to: "alice", message: ""),
            .friendDeclined(from: "carol", to: "alice"),
            .friendRequest(from: "carol", to: "alice", message: ""),
            .friendCancelled(from: "carol", to: "alice"),
            .friendRemoved(user: "alice", friend: "bob"),
        ]
        try await alice.waitFor("alice's notices") { _ in alice.publications(on: "inbox:alice").count >= expectedForAlice.count }
        #expect(alice.publications(on: "inbox:alice").compactMap(InboxNotice.init) == expectedForAlice)
        try await carol.waitFor("carol's crossing notice") { _ in
            carol.publications(on: "inbox:carol").compactMap(InboxNotice.init).contains(.friendAccepted(from: "bob", to: "carol"))
        }
    }

    @Test func chat() async throws {
        let server = try await startHuddle()
        let (alice, _) = try await signedUp("alice", server: server)
        let (bob, _) = try await signedUp("bob", server: server)
        _ = try await alice.ok("request") { $0.sendFriendRequest(to: "bob", completion: $1) }
        try await bob.ok("accept") { $0.acceptFriendRequest(from: "alice", completion: $1) }
        let room = ChatRoom.name("Bob", "alice")
        #expect(room == "chat:alice~bob" && ChatRoom.partner(in: room, for: "bob") == "alice")
        try await alice.waitFor("bob's presence") { $0.contains { if case .presence(user: "bob", online: true, _) = $0 { return true } else { return false } } }

        for text in ["a", "b", "c"] { _ = try await alice.ok("publish") { $0.publish(room, data: .string(text), completion: $1) } }
        let unread = try await bob.ok("unread") { $0.unread(completion: $1) }
        #expect(unread == UnreadSummary(rooms: [RoomUnread(channel: room, offset: 3, read: 0, unread: 3)], total: 3))
        let marker = try await bob.ok("mark_read") { $0.markRead(room, offset: 2, completion: $1) }
        #expect(marker == ReadMarker(channel: room, read: 2, unread: 1, badge: 1))
        #expect(try await bob.failure { $0.markRead("room:x", offset: 1, completion: $1) }.serverCode == "invalid_channel")

        try await bob.ok("typing") { $0.typing(in: room, completion: $1) }
        try await alice.waitFor("bob typing") { $0.contains { if case .typing(channel: room, user: "bob", _) = $0 { return true } else { return false } } }
        #expect(!bob.events.contains { if case .typing = $0 { return true } else { return false } }, "not sent to the typist")
    }

    /// Requests made while the client cannot connect wait for the connection (within their
    /// timeout); a stopped client refuses at once.
    @Test func requestsWaitForTheConnectionAndFailOnceStopped() async throws {
        let server = try await startHuddle()
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        proxy.setRefusing(true)
        let client = try await ClientHarness(url: proxy.url)
        try await client.waitFor("a failed attempt") { $0.contains { $0.isReconnecting } }
        async let ping = client.call { $0.ping(completion: $1) }
        let queuedBy = Date().addingTimeInterval(10)
        while await client.run({ $0.pendingRequests }) != 1 {
            guard Date() < queuedBy else { throw TestFailure("the ping was never queued") }
            try await Task.sleep(for: .milliseconds(10))
        }
        // Another refused attempt after the ping was queued: it still waits.
        let attempts = client.events.filter(\.isReconnecting).count
        try await client.waitFor("another failed attempt") { $0.filter(\.isReconnecting).count > attempts }
        #expect(await client.run { $0.pendingRequests } == 1, "the ping waits")
        proxy.setRefusing(false)
        #expect(try await ping.get() > 0)
        await client.run { $0.stop() }
        #expect(try await client.failure { $0.ping(completion: $1) } == .closed)
        #expect(client.events.last == .stopped(.requested))

        // A request that cannot get a connection within its timeout fails with timedOut, and
        // the waiting room is bounded.
        proxy.setRefusing(true)
        let impatient = try await ClientHarness(url: proxy.url) {
            $0.requestTimeoutMilliseconds = 300
            $0.maxQueuedRequests = 1
        }
        async let waiting = impatient.call { $0.ping(completion: $1) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(try await impatient.failure { $0.ping(completion: $1) } == .overloaded)
        #expect(await waiting == .failure(.timedOut))
    }

    /// wss://: the test CA trusted through the configuration, or `insecure`; an untrusted
    /// certificate is a failed attempt (the reason says why), retried like any other.
    @Test func secureConnections() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--kdf-iterations", "1000"], tls: certificates)
        for tls in [ClientTLSOptions(caFile: certificates.caCertificate.path), ClientTLSOptions(insecure: true)] {
            let client = try await ClientHarness(url: server.tlsURL) { $0.connection.tls = tls }
            #expect(try await client.ok("ping over wss") { $0.ping(completion: $1) } > 0)
        }
        let untrusted = try await ClientHarness(url: server.tlsURL) { $0.reconnect.maxAttempts = 1 }
        try await untrusted.waitFor("giving up") { $0.contains { $0.stopReason != nil } }
        guard case .gaveUp(_, let reason)? = untrusted.events.compactMap(\.stopReason).first else {
            Issue.record("did not give up: \(untrusted.events)")
            return
        }
        #expect(reason.contains("certificate"), "\(reason)")
    }
}
