@testable import HuddleCore
import HuddleProtocol
import Testing

/// Cluster mode applies another node's commands with `applyReplicated`: a node must then tell
/// its own connections exactly what they would have heard had the request been handled there.
/// Two cores from the same state, the same users connected and subscribed on both; every step
/// is decided on A by `handle`, and its commands are applied on B. Whatever A told its
/// connections, B must tell the corresponding ones, so the test follows any event a command
/// gains later without being edited.
@Suite struct ReplicatedApplyTests {
    /// The events compared: what a connection hears because of durable state (typing is
    /// ephemeral; replies, pushes and sign-in work belong to the deciding node).
    private enum EventKind: Hashable, CaseIterable {
        case deliver, feedEvent, memoryChanged, presenceChanged, closeConnections
        case profileChanged
    }

    private final class TwoNodes {
        static let configuration: CoreConfiguration = {
            var configuration = CoreConfiguration()
            configuration.expiredSessionRetentionMilliseconds = 60_000
            configuration.history[.room] = HistoryLimit(maxPublications: 100, maxAgeMilliseconds: 60 * 60_000)
            configuration.passwordResetEnabled = true
            return configuration
        }()

        let a = CoreHarness(configuration: TwoNodes.configuration)
        let b = HuddleCore(configuration: TwoNodes.configuration)
        /// A's connection → the same user's connection on B.
        private(set) var mirror: [ConnectionRef: ConnectionRef] = [:]
        private var nextSerialOnB: UInt64 = 1
        private(set) var compared: [EventKind: Int] = [:]

        /// Decides on A, applies A's commands on B, and checks B told its connections what A
        /// told the corresponding ones. `localOnB` runs on B first (B's own tick, which must
        /// leave what is durable to A's commands).
        @discardableResult
        func step(_ request: CoreRequest, localOnB: CoreRequest? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> CoreStep {
            let decided = a.handle(request)
            var replicated: [CoreOutput] = []
            if let localOnB {
                let local = b.handle(localOnB, at: a.time)
                #expect(local.commands.isEmpty, "B's own \(localOnB.body) decided \(local.commands)", sourceLocation: sourceLocation)
                replicated += local.outputs
            }
            let applied = b.applyReplicated(decided.commands, at: a.time)
            #expect(Self.events(in: applied, through: { $0 }).count == applied.count,
                    "applyReplicated made more than events: \(applied)", sourceLocation: sourceLocation)
            replicated += applied
            let expected = Self.events(in: decided.outputs, through: { self.mirror[$0] ?? $0 })
            let got = Self.events(in: replicated, through: { $0 })
            #expect(got == expected, "for \(request.body)", sourceLocation: sourceLocation)
            for output in got { compared[Self.kind(of: output)!, default: 0] += 1 }
            a.advance(10)
            return decided
        }

        /// Runs a request that changes nothing durable on both nodes (subscribing, signing in
        /// the mirror): each node's own business, not compared.
        func onBoth(_ aRef: ConnectionRef, _ request: (ConnectionRef) -> CoreRequest) {
            #expect(a.handle(request(aRef)).commands.isEmpty)
            #expect(b.handle(request(mirror[aRef]!), at: a.time).commands.isEmpty)
        }

        /// A device of the user signed in on each node with this session.
        func mirror(_ aRef: ConnectionRef, signedInWith session: NewSession) {
            let bRef = ConnectionRef(loop: 1, serial: nextSerialOnB)
            nextSerialOnB += 1
            mirror[aRef] = bRef
            _ = b.handle(.connectionOpened(bRef, address: "192.0.2.2"), at: a.time)
            let signedIn = b.handle(.authenticate(bRef, requestID: nil, tokenHash: session.tokenHash), at: a.time)
            #expect(signedIn.outputs.contains { if case .sessionAccepted = $0 { true } else { false } })
        }

        /// Signs a new user up on A (compared), then the same user in on B.
        func signUp(_ name: String) -> (ConnectionRef, NewSession) {
            let connection = a.connect()
            let session = a.newSession()
            step(CoreHarness.signUpRequest(connection, name, session: session))
            mirror(connection, signedInWith: session)
            return (connection, session)
        }

        /// Logs a second device of the user in on A (compared), then its mirror on B.
        func logIn(_ name: String, lifetime: Int64) -> (ConnectionRef, NewSession) {
            let connection = a.connect()
            let session = a.newSession(lifetime: lifetime)
            step(.beginLogin(connection, requestID: "l", login: name, address: "192.0.2.1", password: "secret"))
            step(.finishLogin(connection, requestID: "l", username: name, passwordMatched: true, address: "192.0.2.1", session: session))
            mirror(connection, signedInWith: session)
            return (connection, session)
        }

        /// The device goes away on both nodes (each closes its own socket).
        func close(_ aRef: ConnectionRef) {
            a.handle(.connectionClosed(aRef))
            _ = b.handle(.connectionClosed(mirror[aRef]!), at: a.time)
        }

        private static func kind(of output: CoreOutput) -> EventKind? {
            switch output {
            case .deliver: .deliver
            case .feedEvent: .feedEvent
            case .memoryChanged: .memoryChanged
            case .presenceChanged: .presenceChanged
            case .closeConnections: .closeConnections
            case .profileChanged: .profileChanged
            default: nil
            }
        }

        private static func events(in outputs: [CoreOutput], through map: (ConnectionRef) -> ConnectionRef) -> [CoreOutput] {
            func mapped(_ refs: [ConnectionRef]) -> [ConnectionRef] { refs.map(map).sorted() }
            return outputs.compactMap { output in
                switch output {
                case let .deliver(publication, to): .deliver(publication, to: mapped(to))
                case let .feedEvent(event, to): .feedEvent(event, to: mapped(to))
                case let .memoryChanged(change, to): .memoryChanged(change, to: mapped(to))
                case let .presenceChanged(user, online, to): .presenceChanged(user: user, online: online, to: mapped(to))
                case let .closeConnections(refs, code, reason): .closeConnections(mapped(refs), code: code, reason: reason)
                case let .profileChanged(user, profile, time, to): .profileChanged(user: user, profile, time: time, to: mapped(to))
                default: nil
                }
            }
        }
    }

    @Test func everyCommandTellsTheOtherNodesConnectionsWhatItTellsTheDecidingNodes() {
        let nodes = TwoNodes()
        let (alice, aliceSession) = nodes.signUp("alice")
        let (bob, _) = nodes.signUp("bob")
        let (carol, _) = nodes.signUp("carol")
        for (connection, user) in [(alice, "alice"), (bob, "bob"), (carol, "carol")] {
            nodes.onBoth(connection) { .subscribe($0, requestID: "s", channel: "inbox:" + user, since: nil) }
            nodes.onBoth(connection) { .subscribe($0, requestID: "s", channel: "room:lobby", since: nil) }
        }
        let (alicePhone, _) = nodes.logIn("alice", lifetime: CoreHarness.sessionLifetime)
        nodes.onBoth(alicePhone) { .subscribe($0, requestID: "s", channel: "inbox:alice", since: nil) }

        // Friends: declined, cancelled, accepted, and two requests crossing.
        nodes.step(.sendFriendRequest(carol, requestID: "f", user: "alice", message: "hi"))
        nodes.step(.answerFriendRequest(alice, requestID: "f", user: "carol", accept: false))
        nodes.step(.sendFriendRequest(alice, requestID: "f", user: "carol", message: ""))
        nodes.step(.cancelFriendRequest(alice, requestID: "f", user: "carol"))
        nodes.step(.sendFriendRequest(alice, requestID: "f", user: "bob", message: "hello"))
        nodes.step(.answerFriendRequest(bob, requestID: "f", user: "alice", accept: true))
        nodes.step(.sendFriendRequest(bob, requestID: "f", user: "carol", message: ""))
        nodes.step(.sendFriendRequest(carol, requestID: "f", user: "bob", message: ""))

        // Chat and rooms.
        for connection in [alice, bob] {
            nodes.onBoth(connection) { .subscribe($0, requestID: "s", channel: "chat:alice~bob", since: nil) }
        }
        nodes.onBoth(bob) { .subscribe($0, requestID: "s", channel: "loc:alice", since: nil) }
        nodes.step(.publish(alice, requestID: "p", channel: "chat:alice~bob", type: "message", data: #"{"text":"hi"}"#))
        nodes.step(.publish(alice, requestID: "p", channel: "chat:alice~bob", type: "message", data: #"{"text":"again"}"#, clientID: "m2"))
        nodes.step(.markRead(bob, requestID: "r", channel: "chat:alice~bob", offset: 2))
        nodes.step(.publish(carol, requestID: "p", channel: "room:lobby", type: "message", data: "{}"))
        nodes.step(.serverPublish(requestID: "api", channel: "inbox:alice", type: "notice", data: "{}"))

        // Feed, one post through a keyed write (and its retry, which changes nothing).
        nodes.step(.createPost(alice, requestID: "p", text: "sunny", activity: nil, at: nil))
        nodes.step(.likePost(bob, requestID: "l", post: 1, liked: true))
        nodes.step(.likePost(bob, requestID: "l", post: 1, liked: false))
        nodes.step(.commentOnPost(bob, requestID: "c", post: 1, text: "nice"))
        nodes.step(.deletePost(alice, requestID: "d", post: 1))
        let keyedPost = CoreRequest.keyed(
            bob, requestID: "k", op: "post", clientID: "post-1", .createPost(bob, requestID: "k", text: "kept", activity: nil, at: nil))
        nodes.step(keyedPost)
        nodes.step(keyedPost)

        // Activities: a match, and its end when a status runs out.
        nodes.step(.activityOn(alice, requestID: "a", activity: "Coffee", friends: nil, expiresInSeconds: 60))
        nodes.step(.activityOn(bob, requestID: "a", activity: "Anything", friends: ["alice"], expiresInSeconds: 3600))
        nodes.a.advance(61_000)
        nodes.step(.expireActivities)
        nodes.step(.activityOn(alice, requestID: "a", activity: "Gym", friends: ["bob"], expiresInSeconds: 3600))
        nodes.step(.activityOff(bob, requestID: "a", activity: "Anything"))
        nodes.step(.activityOn(bob, requestID: "a", activity: "Gym", friends: nil, expiresInSeconds: 3600))

        // Places: arriving, a rename of the current place, a fix elsewhere.
        nodes.step(.setPlace(
            alice, requestID: "ps", id: nil, label: "Home", latitude: SimulatedFixes.latitude(north: 0),
            longitude: SimulatedFixes.longitude(east: 0), radius: 100))
        nodes.step(.reportRegion(alice, requestID: "r", placeID: 1, entered: true, time: nodes.a.time))
        nodes.step(.setPlace(
            alice, requestID: "ps", id: 1, label: "Home sweet home", latitude: SimulatedFixes.latitude(north: 0),
            longitude: SimulatedFixes.longitude(east: 0), radius: 100))
        let fix = SimulatedFixes.exact(east: 5_000, accuracy: 10, time: nodes.a.time)
        nodes.step(.reportLocation(alice, requestID: "fx", latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy, time: fix.time))

        // Memories on alice's two devices, with a photo she uploaded.
        let photo = String(repeating: "ab", count: 32)
        nodes.step(.recordPhoto(caller: ConnectionRef(loop: 9, serial: 1), tokenHash: aliceSession.tokenHash, hash: photo, size: 10))
        nodes.step(.createMemory(alicePhone, requestID: "m", MemoryFields(title: "Lisbon", date: "2025-06-14")))
        nodes.step(.updateMemory(alice, requestID: "m", memory: 1, MemoryFields(title: "Lisboa")))
        nodes.step(.addMemoryPoint(alice, requestID: "m", memory: 1, MemoryPointFields(time: 5, note: "tram 28", photos: [photo])))
        nodes.step(.updateMemoryPoint(alicePhone, requestID: "m", memory: 1, point: 1, MemoryPointFields(note: "tram 12")))
        nodes.step(.addMemoryPoint(alice, requestID: "m", memory: 1, MemoryPointFields(time: 6)))
        nodes.step(.deleteMemoryPoint(alice, requestID: "m", memory: 1, point: 2))
        nodes.step(.deleteMemory(alicePhone, requestID: "m", memory: 1))

        // Profiles: alice's name and her photo as avatar, told to her friend bob and her devices;
        // posts show it.
        nodes.step(.setProfile(alice, requestID: "pf", displayName: "Alice ☕", avatar: photo))
        nodes.step(.createPost(alice, requestID: "p", text: "with a name", activity: nil, at: nil))
        nodes.step(.setProfile(alicePhone, requestID: "pf", displayName: "", avatar: nil))

        // Sessions: bob signs in on a tablet and revokes it by id from his first device.
        let (_, bobPhoneSession) = nodes.logIn("bob", lifetime: CoreHarness.sessionLifetime)
        nodes.step(.revokeSession(bob, requestID: "sr", id: Hex.encode(Array(bobPhoneSession.tokenHash.prefix(8)))))

        // Passwords: bob changes his and revokes his other sessions (closed on both nodes);
        // carol's reset code is guessed once, then used (her sessions closed on both nodes).
        let (_, bobLaptopSession) = nodes.logIn("bob", lifetime: CoreHarness.sessionLifetime)
        _ = bobLaptopSession
        nodes.step(CoreRequest(connection: bob, requestID: "pc", .operation(.passwordChange(oldPassword: "p", newPassword: "a new one!", revokeOthers: true))))
        let verified = nodes.a.core.durableState.accounts["bob"]!.credentials!
        let newCredentials = Credentials(salt: [1], hash: [2], iterations: 1000)
        nodes.step(CoreRequest(connection: bob, requestID: "pc", .finishPasswordChange(
            username: "bob", verified: verified, newCredentials: newCredentials, revokeOthers: true, address: "192.0.2.1")))
        let asking = nodes.a.connect()
        nodes.step(CoreRequest(connection: asking, requestID: "rr", .requestPasswordReset(
            login: "carol", address: "192.0.2.9", codeHash: [5, 5], expiresAt: nodes.a.time + 60_000)))
        nodes.step(CoreRequest(connection: asking, requestID: "rp", .beginPasswordReset(login: "carol", address: "192.0.2.9", codeHash: [6], newPassword: "a new one!")))
        nodes.step(CoreRequest(connection: asking, requestID: "rp", .finishPasswordReset(
            username: "carol", codeHash: [5, 5], credentials: newCredentials, address: "192.0.2.9")))

        // The end of a friendship ends bob's loc: subscription on both nodes, and the match.
        nodes.step(.removeFriend(bob, requestID: "f", user: "alice"))
        nodes.step(.reportRegion(alice, requestID: "r", placeID: 1, entered: false, time: nodes.a.time))
        nodes.step(.removePlace(alice, requestID: "pr", id: 1))

        // Identities: an account made by a sign-in (with a nonce), a link, an unlink.
        let identity = { (subject: String, nonce: String?) in
            VerifiedIdentity(issuer: "https://idp.test", subject: subject, email: nil, proposedUsername: nil, nonce: nonce, expiresAt: nodes.a.time + 600_000)
        }
        let dora = nodes.a.connect()
        nodes.step(CoreRequest(connection: dora, requestID: "i", .identityVerified(IdentityProof(
            purpose: .signIn(username: "dora"), identity: identity("d-1", "n-1"), refusal: nil, session: nodes.a.newSession()))))
        nodes.step(CoreRequest(connection: dora, requestID: "i", .identityVerified(IdentityProof(
            purpose: .link, identity: identity("d-2", nil), refusal: nil, session: nodes.a.newSession()))))
        nodes.step(CoreRequest(connection: dora, requestID: "u", .operation(.identityUnlink(issuer: "https://idp.test", subject: "d-1"))))
        // An account made by an identity, deleted with a fresh sign-in of it.
        let fay = nodes.a.connect()
        let faySession = nodes.a.newSession()
        nodes.step(CoreRequest(connection: fay, requestID: "i", .identityVerified(IdentityProof(
            purpose: .signIn(username: "fay"), identity: identity("f-1", nil), refusal: nil, session: faySession))))
        nodes.mirror(fay, signedInWith: faySession)
        var fresh = identity("f-1", "n-f")
        fresh.issuedAt = nodes.a.time
        let erased = nodes.step(CoreRequest(connection: fay, requestID: "d", .identityVerified(IdentityProof(
            purpose: .deleteAccount, identity: fresh, refusal: nil, session: nodes.a.newSession()))))
        #expect(erased.commands.contains { if case .eraseUser("fay", _) = $0 { true } else { false } })
        // Blocking: between friends (bob and carol crossed requests), what an unfriending tells;
        // one lifted, one kept. carol signs in again: her reset above revoked her sessions.
        let (carolAgain, _) = nodes.logIn("carol", lifetime: CoreHarness.sessionLifetime)
        nodes.step(.block(carolAgain, requestID: "b", user: "bob"))
        nodes.step(.unblock(carolAgain, requestID: "b", user: "bob"))
        nodes.step(.block(carolAgain, requestID: "b", user: "alice"))
        #expect(nodes.b.durableState.blocks.blocked(by: "carol") == ["alice"])

        // Moderation: a report, its resolution, and a suspension closing dave's connection on
        // both nodes (4003), then lifted.
        let (dave, _) = nodes.signUp("dave")
        nodes.step(.report(carolAgain, requestID: "r", target: .user("dave"), reason: "spam", text: "ads"))
        nodes.step(CoreRequest(requestID: "api-r", .moderation(.resolveReport(id: 1, action: "user_suspended", note: ""))))
        let suspension = nodes.step(CoreRequest(requestID: "api-s", .moderation(.suspend(username: "dave", reason: "ads", until: nil))))
        #expect(suspension.outputs.contains { if case .closeConnections([dave], 4003, _) = $0 { true } else { false } })
        nodes.step(CoreRequest(requestID: "api-u", .moderation(.unsuspend(username: "dave"))))

        // Logouts: one device, then every device of a user.
        nodes.step(.logout(alicePhone, requestID: "o", all: false))
        nodes.step(.logout(carol, requestID: "o", all: true))

        // Moderation and deletion: the operator removes a chat message (a tombstone told to its
        // subscribers), then deletes erin, bob's friend with a message in the room and a photo
        // (whose file only the deciding node removes).
        nodes.step(.removeContent(requestID: "rm", .publication(channel: "chat:alice~bob", offset: 1)))
        let (erin, erinSession) = nodes.signUp("erin")
        nodes.step(.recordPhoto(caller: ConnectionRef(loop: 9, serial: 2), tokenHash: erinSession.tokenHash, hash: String(repeating: "cd", count: 32), size: 10))
        nodes.onBoth(erin) { .subscribe($0, requestID: "s", channel: "room:lobby", since: nil) }
        nodes.step(.sendFriendRequest(erin, requestID: "f", user: "bob", message: ""))
        nodes.step(.answerFriendRequest(bob, requestID: "f", user: "erin", accept: true))
        nodes.step(.publish(erin, requestID: "p", channel: "room:lobby", type: "message", data: "{}"))
        let deletion = nodes.step(.deleteUser(requestID: "du", username: "erin"))
        #expect(deletion.commands.contains { if case .eraseUser("erin", _) = $0 { true } else { false } })
        #expect(deletion.outputs.contains(.removePhotoFiles([String(repeating: "cd", count: 32)])))

        // A short session whose device went away, then time: expiries, purges, trims, grace.
        let (bobTablet, _) = nodes.logIn("bob", lifetime: 60_000)
        nodes.close(bobTablet)
        nodes.a.advance(2 * CoreHarness.day)
        nodes.step(.expireActivities)
        let tick = nodes.step(.tick, localOnB: CoreRequest(.localTick))
        #expect(tick.commands.contains { if case .purgeExpiredSessions = $0 { true } else { false } })
        #expect(tick.commands.contains { if case .trimExpiredHistory = $0 { true } else { false } })
        #expect(tick.commands.contains { if case .forgetKeptResults = $0 { true } else { false } })

        #expect(nodes.b.durableState == nodes.a.core.durableState)
        for kind in EventKind.allCases {
            #expect(nodes.compared[kind, default: 0] > 0, "no \(kind) compared: the scenario no longer covers it")
        }
    }
}
