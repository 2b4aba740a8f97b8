import Foundation
import HuddleCore
import HuddleProtocol
import Testing

@Suite struct DurableStateTests {
    /// Small history limits so the scenario trims by count and by age.
    static var configuration: CoreConfiguration {
        var configuration = CoreConfiguration()
        configuration.history[.room] = HistoryLimit(maxPublications: 7, maxAgeMilliseconds: 60_000)
        configuration.history[.chat] = HistoryLimit(maxPublications: 4, maxAgeMilliseconds: CoreHarness.day)
        configuration.expiredSessionRetentionMilliseconds = 1_000
        configuration.keptResultMilliseconds = 1_000
        configuration.keptResultSweepMilliseconds = 1_000
        configuration.passwordResetEnabled = true
        return configuration
    }

    /// A long, varied session driven through `handle` only: accounts, logins, a failed login,
    /// logouts, publishes on every namespace (with trimming), the HTTP API, expiry purges.
    /// Returns the harness and the durable state after each request.
    static func runScenario() -> (CoreHarness, [CoreDurableState]) {
        let harness = CoreHarness(configuration: configuration)
        var states: [CoreDurableState] = []
        func step(_ request: CoreRequest) {
            harness.handle(request)
            states.append(harness.core.durableState)
            harness.advance(700)
        }
        var generator = SplitMix(seed: 7)
        let names = ["alice", "bob", "carol", "dave"]
        var connections: [String: ConnectionRef] = [:]
        var sessions: [String: NewSession] = [:]
        for (index, name) in names.enumerated() {
            let connection = harness.connect(loop: index % 2)
            let session = harness.newSession(lifetime: name == "dave" ? 2_000 : CoreHarness.sessionLifetime)
            step(CoreHarness.signUpRequest(connection, name.uppercased(), email: "\(name)@Example.com", session: session))
            connections[name] = connection
            sessions[name] = session
        }
        let channels = ["room:lobby", "room:den", "chat:alice~bob", "chat:bob~carol", "loc:alice", "inbox:bob"]
        for round in 0..<120 {
            let name = names[Int(generator.next() % 3)]
            let channel = channels[Int(generator.next() % UInt64(channels.count))]
            switch round % 10 {
            case 3:
                step(.serverPublish(requestID: "api\(round)", channel: channel, type: "notice", data: "{\"round\":\(round)}"))
            case 5:
                step(.subscribe(connections[name]!, requestID: "s\(round)", channel: channel, since: nil))
            case 7:
                step(.history(connections[name]!, requestID: "h\(round)", channel: channel, before: nil, limit: 5))
            case 8:
                // Chat with client ids (every other one a retry) and read markers.
                let clientID = "c\(round / 20)"
                step(.publish(connections[name]!, requestID: "p\(round)", channel: "chat:alice~bob", type: "message", data: "1", clientID: clientID))
                step(.markRead(connections[name]!, requestID: "m\(round)", channel: "chat:alice~bob", offset: UInt64(round / 3)))
            default:
                step(.publish(connections[name]!, requestID: "p\(round)", channel: channel, type: "message", data: "\"\(name) \(round)\""))
            }
            if round == 20 {
                // Friends: a request accepted, one crossing another, one declined and resent,
                // one cancelled, one removal — each with its inbox notices.
                step(.sendFriendRequest(connections["alice"]!, requestID: "f1", user: "bob", message: "hi \"bob\""))
                step(.answerFriendRequest(connections["bob"]!, requestID: "f2", user: "alice", accept: true))
                step(.sendFriendRequest(connections["carol"]!, requestID: "f3", user: "bob", message: ""))
                step(.sendFriendRequest(connections["bob"]!, requestID: "f4", user: "carol", message: "me too"))
                step(.sendFriendRequest(connections["carol"]!, requestID: "f5", user: "alice", message: "?"))
                step(.answerFriendRequest(connections["alice"]!, requestID: "f6", user: "carol", accept: false))
                step(.sendFriendRequest(connections["carol"]!, requestID: "f7", user: "alice", message: "again"))
                step(.sendFriendRequest(connections["dave"]!, requestID: "f8", user: "alice", message: ""))
                step(.cancelFriendRequest(connections["dave"]!, requestID: "f9", user: "alice"))
                step(.sendFriendRequest(connections["dave"]!, requestID: "f10", user: "bob", message: "later"))
                step(.removeFriend(connections["bob"]!, requestID: "f11", user: "carol"))
            }
            if round == 30 {
                // Memories: an uploaded photo, a memory edited, points added, changed and
                // deleted, another user's memory deleted.
                let alice = connections["alice"]!
                let photo = String(repeating: "ab", count: 32)
                step(.recordPhoto(caller: alice, tokenHash: sessions["alice"]!.tokenHash, hash: photo, size: 10))
                step(.createMemory(alice, requestID: "mc", MemoryFields(title: "Lisbon", date: "2025-06-14", position: .set(MemoryPosition(latitude: 38.7, longitude: -9.1)))))
                step(.updateMemory(alice, requestID: "mu", memory: 1, MemoryFields(placeName: "Alfama", position: .remove)))
                step(.addMemoryPoint(alice, requestID: "pa", memory: 1, MemoryPointFields(time: 5, note: "tram", photos: [photo])))
                step(.addMemoryPoint(alice, requestID: "pb", memory: 1, MemoryPointFields(time: 1)))
                step(.updateMemoryPoint(alice, requestID: "pu", memory: 1, point: 1, MemoryPointFields(time: 9)))
                step(.deleteMemoryPoint(alice, requestID: "pd", memory: 1, point: 2))
                step(.createMemory(connections["bob"]!, requestID: "mc", MemoryFields(title: "Porto", date: "2025-07-01")))
                step(.deleteMemory(connections["bob"]!, requestID: "md", memory: 2))
                // Profiles: alice's name and avatar, one changed, bob's set and cleared.
                step(.setProfile(alice, requestID: "ps", displayName: "Alice ☕", avatar: photo))
                step(.setProfile(alice, requestID: "ps", displayName: "Alice", avatar: nil))
                step(.setProfile(connections["bob"]!, requestID: "ps", displayName: "Bob", avatar: nil))
                step(.setProfile(connections["bob"]!, requestID: "ps", displayName: "", avatar: nil))
            }
            if round == 40 {
                // bob logs in on a second device, logs the first out, and fails a login once.
                let device = harness.connect(loop: 1)
                step(.beginLogin(device, requestID: "L", login: "bob@example.com", address: "a", password: "p"))
                step(.finishLogin(device, requestID: "L", username: "bob", passwordMatched: true, address: "a", session: harness.newSession()))
                step(.logout(connections["bob"]!, requestID: "o", all: false))
                connections["bob"] = device
                let stranger = harness.connect()
                step(.beginLogin(stranger, requestID: "L", login: "carol", address: "b", password: "p"))
                step(.finishLogin(stranger, requestID: "L", username: "carol", passwordMatched: false, address: "b", session: harness.newSession()))
            }
            if round == 60 {
                step(.disconnectUser(requestID: "d", username: "carol"))
                connections["carol"] = harness.connectSignedIn(with: sessions["carol"]!)
                step(.tick)
                // Sessions: carol's last seen, an hour on, is logged; she logs in on a second
                // device and revokes that session by its id from the first.
                harness.advance(CoreConfiguration().sessionSeenIntervalMilliseconds)
                step(.authenticate(harness.connect(), requestID: "a", tokenHash: sessions["carol"]!.tokenHash))
                step(.recordSessionsSeen)
                let tablet = harness.connect()
                let tabletSession = harness.newSession()
                step(.beginLogin(tablet, requestID: "L", login: "carol", address: "d", password: "p"))
                step(.finishLogin(tablet, requestID: "L", username: "carol", passwordMatched: true, address: "d", session: tabletSession))
                step(.revokeSession(connections["carol"]!, requestID: "r", id: Hex.encode(Array(tabletSession.tokenHash.prefix(8)))))
                // Passwords: carol changes hers; dave's reset code is guessed at once, then used.
                let carol = connections["carol"]!
                step(CoreRequest(connection: carol, requestID: "pc", .operation(.passwordChange(oldPassword: "p", newPassword: "a new one!", revokeOthers: false))))
                let verified = harness.core.durableState.accounts["carol"]!.credentials!
                let changed = Credentials(salt: [9], hash: [9, 9], iterations: 1000)
                step(CoreRequest(connection: carol, requestID: "pc", .finishPasswordChange(
                    username: "carol", verified: verified, newCredentials: changed, revokeOthers: false, address: "192.0.2.1")))
                let asking = harness.connect()
                let code: [UInt8] = [1, 2, 3]
                step(CoreRequest(connection: asking, requestID: "rr", .requestPasswordReset(
                    login: "dave", address: "192.0.2.2", codeHash: code, expiresAt: harness.time + 60_000)))
                step(CoreRequest(connection: asking, requestID: "rp", .beginPasswordReset(
                    login: "dave", address: "192.0.2.2", codeHash: [7], newPassword: "a new one!")))
                step(CoreRequest(connection: asking, requestID: "rp", .beginPasswordReset(
                    login: "dave", address: "192.0.2.2", codeHash: code, newPassword: "a new one!")))
                step(CoreRequest(connection: asking, requestID: "rp", .finishPasswordReset(
                    username: "dave", codeHash: code, credentials: changed, address: "192.0.2.2")))
            }
            if round == 80 {
                step(.logout(connections["alice"]!, requestID: "o", all: true))
                let connection = harness.connect()
                step(.beginLogin(connection, requestID: "L", login: "alice", address: "c", password: "p"))
                step(.finishLogin(connection, requestID: "L", username: "alice", passwordMatched: true, address: "c", session: harness.newSession()))
                connections["alice"] = connection
                // A publication much later than the others ages the room's history out.
                harness.advance(60_000)
            }
            if round == 90 {
                // A minute after the jump, what the rooms kept from before it has aged out:
                // the tick trims it.
                harness.advance(60_000)
                step(.tick)
            }
            if round == 100 {
                // Feed: friends' posts, a like toggled, set and taken back, a comment, a deletion.
                step(.createPost(connections["alice"]!, requestID: "fp1", text: "gym?", activity: "Gym", at: harness.time + 60_000))
                step(.createPost(connections["bob"]!, requestID: "fp2", text: "coffee", activity: nil, at: nil))
                step(.likePost(connections["bob"]!, requestID: "fl1", post: 1, liked: nil))
                step(.likePost(connections["alice"]!, requestID: "fl2", post: 2, liked: true))
                step(.likePost(connections["bob"]!, requestID: "fl3", post: 1, liked: false))
                step(.commentOnPost(connections["bob"]!, requestID: "fc", post: 1, text: "in \"5\""))
                step(.listFeed(connections["bob"]!, requestID: "ff", before: nil, limit: 10))
                step(.deletePost(connections["bob"]!, requestID: "fd", post: 2))
                // The operator removes the chat room's newest message: a tombstone.
                let chat = harness.core.durableState.channels["chat:alice~bob"]!
                step(.removeContent(requestID: "rm", .publication(channel: "chat:alice~bob", offset: chat.lastOffset)))
                // eve joins, writes, likes, and the operator deletes her account.
                let eve = harness.signUp("eve").connection
                step(.publish(eve, requestID: "ep", channel: "room:lobby", type: "message", data: "\"eve\"", clientID: nil))
                step(.likePost(eve, requestID: "el", post: 1, liked: true))
                step(.deleteUser(requestID: "ed", username: "eve"))
                // Her channels go in a chunk the server asks for after the deletion's turn.
                step(.continueErasure)
                // A keyed comment, retried: kept once, the retry changes nothing.
                for _ in 0..<2 {
                    step(.keyed(connections["alice"]!, requestID: "kc", op: "comment", clientID: "c-1",
                                .commentOnPost(connections["alice"]!, requestID: "kc", post: 1, text: "see you")))
                }
                // Blocking: one kept, one lifted.
                step(.block(connections["carol"]!, requestID: "b1", user: "dave"))
                step(.block(connections["carol"]!, requestID: "b2", user: "bob"))
                step(.unblock(connections["carol"]!, requestID: "b3", user: "bob"))
                // Moderation: one suspension kept, one lifted.
                step(CoreRequest(requestID: "s1", .moderation(.suspend(username: "dave", reason: "spam", until: nil))))
                step(CoreRequest(requestID: "s2", .moderation(.suspend(username: "carol", reason: "a week off", until: harness.time + 7 * CoreHarness.day))))
                step(CoreRequest(requestID: "s3", .moderation(.unsuspend(username: "carol"))))
                // Reports: a user and a post, one resolved.
                step(.report(connections["bob"]!, requestID: "r1", target: .user("carol"), reason: "spam", text: "again"))
                step(.report(connections["bob"]!, requestID: "r2", target: .post(1), reason: "harassment", text: ""))
                step(CoreRequest(requestID: "r3", .moderation(.resolveReport(id: 1, action: "dismissed", note: "fine"))))
                // Kept past the window: the next sweep forgets it.
                harness.advance(2_000)
                step(.tick)
            }
        }
        return (harness, states)
    }

    @Test func theScenarioExercisesEveryKindOfCommand() {
        let (harness, _) = Self.runScenario()
        var kinds = Set<String>()
        for command in harness.log {
            switch command {
            case .signUp: kinds.insert("signUp")
            case .openSession: kinds.insert("openSession")
            case .revokeSessions: kinds.insert("revokeSessions")
            case .purgeExpiredSessions: kinds.insert("purgeExpiredSessions")
            case .trimExpiredHistory: kinds.insert("trimExpiredHistory")
            case .publish(_, let from, _, _, _): kinds.insert(from == nil ? "serverPublish" : "publish")
            case .sendFriendRequest: kinds.insert("sendFriendRequest")
            case .acceptFriendRequest: kinds.insert("acceptFriendRequest")
            case .dropFriendRequest: kinds.insert("dropFriendRequest")
            case .removeFriend: kinds.insert("removeFriend")
            case .publishWithClientID: kinds.insert("publishWithClientID")
            case .markRead: kinds.insert("markRead")
            // Feed.
            case .createPost: kinds.insert("createPost")
            case .setLike: kinds.insert("setLike")
            case .addComment: kinds.insert("addComment")
            case .deletePost: kinds.insert("deletePost")
            case .setActivity, .clearActivity, .startMatch, .endMatch: break  // ActivitiesTests has their replay scenario
            // Places: PlacesTests replays a scenario of its own.
            case .setPlace, .removePlace, .updateLocation: kinds.insert("places")
            // Memories.
            case .createMemory: kinds.insert("createMemory")
            case .updateMemory: kinds.insert("updateMemory")
            case .deleteMemory: kinds.insert("deleteMemory")
            case .putMemoryPoint: kinds.insert("putMemoryPoint")
            case .deleteMemoryPoint: kinds.insert("deleteMemoryPoint")
            case .addPhotoOwner: kinds.insert("addPhotoOwner")
            // Keyed writes.
            case .keepResult: kinds.insert("keepResult")
            case .forgetKeptResults: kinds.insert("forgetKeptResults")
            // Identities: IdentityTests replays a scenario of its own.
            case .createIdentityAccount, .linkIdentity, .unlinkIdentity, .spendNonce: break
            // Profiles and sessions.
            case .setProfile: kinds.insert("setProfile")
            case .seeSession: kinds.insert("seeSession")
            // Passwords.
            case .setCredentials: kinds.insert("setCredentials")
            case .issuePasswordReset: kinds.insert("issuePasswordReset")
            case .failPasswordReset: kinds.insert("failPasswordReset")
            case .resetPassword: kinds.insert("resetPassword")
            // Blocking.
            case .block: kinds.insert("block")
            case .unblock: kinds.insert("unblock")
            // Moderation.
            case .suspend: kinds.insert("suspend")
            case .unsuspend: kinds.insert("unsuspend")
            case .fileReport: kinds.insert("fileReport")
            case .resolveReport: kinds.insert("resolveReport")
            // Moderation and deletion.
            case .removePublication: kinds.insert("removePublication")
            case .eraseUser: kinds.insert("eraseUser")
            case .eraseChannels: kinds.insert("eraseChannels")
            case .finishErasure: kinds.insert("finishErasure")
            case .removeComment: break  // ProtocolRemovalTests drives it through the real server
            }
        }
        let state = harness.core.durableState
        #expect(kinds == [
            "signUp", "openSession", "revokeSessions", "purgeExpiredSessions", "trimExpiredHistory", "publish", "serverPublish",
            "sendFriendRequest", "acceptFriendRequest", "dropFriendRequest", "removeFriend", "publishWithClientID", "markRead",
            "createPost", "setLike", "addComment", "deletePost",
            // Memories.
            "createMemory", "updateMemory", "deleteMemory", "putMemoryPoint", "deleteMemoryPoint", "addPhotoOwner",
            // Keyed writes.
            "keepResult", "forgetKeptResults",
            // Profiles and sessions.
            "setProfile", "seeSession",
            // Passwords.
            "setCredentials", "issuePasswordReset", "failPasswordReset", "resetPassword",
            // Blocking.
            "block", "unblock",
            // Moderation.
            "suspend", "unsuspend", "fileReport", "resolveReport",
            // Moderation and deletion.
            "removePublication", "eraseUser", "eraseChannels", "finishErasure",
        ])
        #expect(state.accounts["carol"]?.credentials?.hash == [9, 9] && state.accounts["dave"]?.credentials?.hash == [9, 9])
        #expect(state.passwordResets.count == 0)
        #expect(state.profiles["alice"] == UserProfile(displayName: "Alice", avatar: String(repeating: "ab", count: 32)) && state.profiles.count == 1)
        #expect(state.sessions.tokenHashes(of: "carol").count == 1)
        #expect(state.blocks.blocked(by: "carol") == ["dave"] && state.blocks.blockCount == 1)
        #expect(state.suspensions["dave"]?.reason == "spam" && state.suspensions.count == 1)
        #expect(state.reports.count == 2 && state.reports.openCount == 1 && state.reports[1]?.resolution?.action == "dismissed")
        #expect(state.keptResults.count(of: "alice") == 0)
        #expect(state.feed.postIDs(of: "alice") == [1] && state.feed[1]?.comments.count == 2 && state.feed[1]?.likers.isEmpty == true)
        #expect(state.memories.memories(of: "alice").map { $0.points.map(\.time) } == [[9]] && state.memories.count == 1)
        #expect(state.readMarkers.offset(of: "bob", in: "chat:alice~bob") > 0)
        #expect(state.friendships.friends(of: "bob") == ["alice"])
        #expect(state.friendships.incomingRequests(of: "alice").map(\.from) == ["carol"])
        #expect(state.friendships.incomingRequests(of: "bob").map(\.from) == ["dave"])
        #expect(state.channels["room:lobby"].map { $0.retainedCount < Int($0.lastOffset) } == true)
        #expect(state.channels["chat:alice~bob"]?.retainedCount == 4)
        #expect(state.sessions[CoreHarness.tokenHash(4)] == nil)
    }

    /// The key property: applying exactly the commands `handle` made rebuilds an equal state.
    @Test func replayingTheCommandsRebuildsAnEqualState() {
        let (harness, _) = Self.runScenario()
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    /// Nothing but the requests and their times decides the outcome.
    @Test func theSameRequestsGiveTheSameCommandsAndState() {
        let (first, _) = Self.runScenario()
        let (second, _) = Self.runScenario()
        #expect(first.log == second.log)
        #expect(first.core.durableState == second.core.durableState)
    }

    @Test func aSnapshotPlusTheLogTailRebuildsAnEqualState() throws {
        let (harness, _) = Self.runScenario()
        let replica = HuddleCore(configuration: Self.configuration)
        let cut = harness.log.count / 2
        for command in harness.log[..<cut] { replica.apply(command) }
        let restored = HuddleCore(configuration: Self.configuration, restoring: try RecordCoding.roundTrip(replica.durableState))
        for command in harness.log[cut...] { restored.apply(command) }
        #expect(restored.durableState == harness.core.durableState)
    }

    @Test func theStateSurvivesACodableRoundTrip() throws {
        let (harness, states) = Self.runScenario()
        for state in [CoreDurableState(), states[states.count / 3], harness.core.durableState] {
            let decoded = try RecordCoding.roundTrip(state)
            #expect(decoded == state)
        }
    }

    /// Equal states encode to equal bytes, whatever order built their dictionaries.
    @Test func equalStatesEncodeToEqualBytes() throws {
        func build(_ order: [Int]) -> HuddleCore {
            let core = HuddleCore()
            for index in order {
                core.apply(.signUp(
                    username: "user\(index)", email: "u\(index)@example.com", credentials: CoreHarness.credentials,
                    session: NewSession(tokenHash: CoreHarness.tokenHash(UInt64(index)), expiresAt: 100), time: 1
                ))
            }
            for index in order { core.apply(.publish(channel: "room:r\(index)", from: nil, type: "t", data: "1", time: 5)) }
            return core
        }
        let forward = build(Array(0..<200))
        let backward = build((0..<200).reversed())
        // Channel epochs depend on creation order, so compare the parts that do not.
        #expect(RecordCoding.json(forward.durableState.accounts) == RecordCoding.json(backward.durableState.accounts))
        #expect(RecordCoding.json(forward.durableState.sessions) == RecordCoding.json(backward.durableState.sessions))
        let restored = try RecordCoding.roundTrip(forward.durableState)
        #expect(restored.snapshotPayload == forward.durableState.snapshotPayload)
    }

    @Test func aRestoredCoreCarriesOn() throws {
        let harness = CoreHarness()
        let (alice, session) = harness.signUp("alice")
        let epoch = harness.publish(alice, "room:lobby").replies[0].epoch!
        harness.publish(alice, "room:lobby")
        let restored = CoreHarness(core: HuddleCore(restoring: try RecordCoding.roundTrip(harness.core.durableState)))
        restored.time = harness.time + 1_000
        let connection = restored.connectSignedIn(with: session)
        #expect(restored.subscribe(connection, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 1))
            == .subscribed(channel: "room:lobby", epoch: epoch, offset: 2, recovered: true, publications: [
                Publication(channel: "room:lobby", epoch: epoch, offset: 2, type: "message", from: "alice", data: "{}", time: harness.time),
            ]))
        #expect(restored.publish(connection, "room:lobby").replies[0] == .published(epoch: epoch, offset: 3, time: restored.time))
        #expect(restored.publish(connection, "room:new").replies[0].epoch == ChannelEpochs.expected(time: restored.time, sequence: 2))
        #expect(restored.handle(CoreHarness.signUpRequest(restored.connect(), "alice", session: restored.newSession())).errorCode == .usernameTaken)
    }

    @Test func aRestoredCorePurgesExpiredSessions() throws {
        var configuration = CoreConfiguration()
        configuration.expiredSessionRetentionMilliseconds = 10
        let harness = CoreHarness(configuration: configuration)
        let session = harness.newSession(lifetime: 100)
        harness.handle(CoreHarness.signUpRequest(harness.connect(), "alice", session: session))
        let restored = HuddleCore(configuration: configuration, restoring: harness.core.durableState)
        #expect(restored.handle(.tick, at: harness.time + 109).commands.isEmpty)
        #expect(restored.handle(.tick, at: harness.time + 110).commands == [.purgeExpiredSessions(tokenHashes: [session.tokenHash], time: harness.time + 110)])
    }

    @Test func corruptSnapshotsAreRefused() {
        let tooManyPublications = #"{"accounts":[],"sessions":[],"channels":{"createdCount":1,"channels":[{"name":"room:a","channel":{"epoch":"e","lastOffset":1,"publications":[{"type":"t","data":"1","time":1},{"type":"t","data":"2","time":2}]}}]}}"#
        let user = #"{"username":"alice","email":"a@b.co","credentials":{"salt":[],"hash":[],"iterations":1},"createdAt":1}"#
        let duplicateUser = #"{"accounts":[\#(user),\#(user)],"sessions":[],"channels":{"createdCount":0,"channels":[]}}"#
        let valid = #"{"accounts":[\#(user)],"sessions":[],"channels":{"createdCount":0,"channels":[]}}"#
        #expect(throws: RecordDecodingError.self) { try RecordCoding.state(tooManyPublications) }
        #expect(throws: RecordDecodingError.self) { try RecordCoding.state(duplicateUser) }
        #expect(throws: Never.self) { try RecordCoding.state(valid) }
        let channels = #""channels":{"createdCount":0,"channels":[]}"#
        let request = #"{"from":"alice","to":"bob","message":"","time":1}"#
        let repeatedFriendship = #"{"accounts":[],"sessions":[],\#(channels),"friendships":{"friendships":[["a","b"],["a","b"]],"requests":[]}}"#
        let unorderedFriendship = #"{"accounts":[],"sessions":[],\#(channels),"friendships":{"friendships":[["b","a"]],"requests":[]}}"#
        let repeatedRequest = #"{"accounts":[],"sessions":[],\#(channels),"friendships":{"friendships":[],"requests":[\#(request),\#(request)]}}"#
        let requestBetweenFriends = #"{"accounts":[],"sessions":[],\#(channels),"friendships":{"friendships":[["alice","bob"]],"requests":[\#(request)]}}"#
        for corrupt in [repeatedFriendship, unorderedFriendship, repeatedRequest, requestBetweenFriends] {
            #expect(throws: RecordDecodingError.self) { try RecordCoding.state(corrupt) }
        }
    }
}

@Suite struct CoreCommandCodingTests {
    static let commands: [CoreCommand] = [
        .signUp(username: "alice", email: "alice@example.com", credentials: CoreHarness.credentials,
                session: NewSession(tokenHash: [1, 2], expiresAt: 10, device: "phone"), time: 1),
        .openSession(username: "alice", session: NewSession(tokenHash: [3], expiresAt: 20), time: 2),
        .revokeSessions(username: "alice", tokenHashes: [[1, 2], [3]], time: 3),
        .purgeExpiredSessions(tokenHashes: [[4]], time: 4),
        .publish(channel: "room:lobby", from: "alice", type: "message", data: "{\"text\":\"hi\"}", time: 5),
        .publish(channel: "inbox:alice", from: nil, type: "notice", data: "null", time: 6),
        .sendFriendRequest(from: "alice", to: "bob", message: "hi", time: 7),
        .acceptFriendRequest(from: "alice", to: "bob", time: 8),
        .dropFriendRequest(from: "carol", to: "bob", time: 9),
        .removeFriend(user: "bob", friend: "alice", time: 10),
        .publishWithClientID(channel: "chat:alice~bob", from: "alice", type: "message", data: "1", clientID: "m-1", time: 11),
        .markRead(user: "bob", channel: "chat:alice~bob", offset: 3, time: 12),
    ]

    @Test func commandsRoundTrip() throws {
        for command in Self.commands {
            #expect(try RecordCoding.roundTrip(command) == command)
        }
    }

    /// The log stores these names: renaming a case or label breaks every existing log.
    @Test func theLoggedFieldNamesAreStable() throws {
        let publish = RecordCoding.json(Self.commands[4])
        #expect(publish == #"{"publish":{"channel":"room:lobby","data":"{\"text\":\"hi\"}","from":"alice","time":5,"type":"message"}}"#)
        let revoke = RecordCoding.json(Self.commands[2])
        #expect(revoke == #"{"revokeSessions":{"time":3,"tokenHashes":[[1,2],[3]],"username":"alice"}}"#)
        let openSession = RecordCoding.json(Self.commands[1])
        #expect(openSession == #"{"openSession":{"session":{"expiresAt":20,"tokenHash":[3]},"time":2,"username":"alice"}}"#)
        let request = RecordCoding.json(Self.commands[6])
        #expect(request == #"{"sendFriendRequest":{"from":"alice","message":"hi","time":7,"to":"bob"}}"#)
        let once = RecordCoding.json(Self.commands[10])
        #expect(once == #"{"publishWithClientID":{"channel":"chat:alice~bob","clientID":"m-1","data":"1","from":"alice","time":11,"type":"message"}}"#)
        let read = RecordCoding.json(Self.commands[11])
        #expect(read == #"{"markRead":{"channel":"chat:alice~bob","offset":3,"time":12,"user":"bob"}}"#)
        let remove = RecordCoding.json(Self.commands[9])
        #expect(remove == #"{"removeFriend":{"friend":"alice","time":10,"user":"bob"}}"#)
    }
}
