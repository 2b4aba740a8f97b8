import HuddleCore
import HuddleProtocol
import Testing

/// The core's outputs cross machines in cluster mode: what `encoded()` writes reads back as the
/// same output, for every case, and bytes it did not make are refused.
@Suite struct CoreOutputEncodingTests {
    static let alice = ConnectionRef(loop: 2, serial: 9_000_000_001)
    static let bob = ConnectionRef(loop: 0, serial: 7)
    static let publication = Publication(
        channel: "chat:alice~bob", epoch: "e1", offset: 3, type: "message", from: "alice", data: #"{"text":"hi \"you\""}"#, time: 1_763_712_000_000,
        clientID: "c-1")
    static let comment = FeedComment(id: 4, author: "bob", text: "nice", time: 1_763_712_000_500)
    static let post = FeedPost(
        id: 9, author: "alice", text: "run?", activity: "running", at: 1_763_712_100_000, time: 1_763_712_000_000, likes: 2, liked: true,
        comments: 1, recentComments: [comment])
    static let point = MemoryPoint(id: 2, time: 5, position: MemoryPosition(latitude: 52.52, longitude: 13.405), placeName: "Mitte", note: "n", photos: ["ab12"])
    static let memory = Memory(
        id: 8, title: "Berlin", date: "2026-11-24", placeName: "Berlin", position: MemoryPosition(latitude: -33.8688, longitude: 151.2093),
        createdAt: 1, updatedAt: 2, pointCount: 1, points: [point])
    static let memoryWithoutPoints = Memory(id: 8, title: "Berlin", date: "2026-11-24", createdAt: 1, updatedAt: 2, pointCount: 0)

    static let samples: [CoreOutput] = [
        .reply(alice, requestID: "1", .published(epoch: "e1", offset: 3, time: 1_763_712_000_000)),
        .reply(nil, requestID: "api-2", .failure(CoreError(.tooManyRequests, "slow down", retryAfterMilliseconds: 250))),
        .reply(alice, requestID: nil, .duplicate(.subscribed(channel: "chat:alice~bob", epoch: "e1", offset: 3, recovered: nil, publications: [publication]))),
        .deliver(publication, to: [bob, alice]),
        .typing(channel: "chat:alice~bob", user: "alice", to: [bob]),
        .presenceChanged(user: "alice", online: false, to: []),
        .localPresence(user: "alice", online: true),
        .verifyPassword(
            alice, requestID: "3", username: "alice", credentials: Credentials(salt: [0, 255], hash: [1, 2, 3], iterations: 600_000), password: "pw \"q\"",
            address: "192.0.2.1"),
        .verifyPassword(alice, requestID: "3", username: nil, credentials: nil, password: "pw", address: "2001:db8::1"),
        .hashNewPassword(alice, requestID: "4", username: "Alice", email: "a@example.com", password: "pw", address: "192.0.2.1"),
        .closeConnections([bob, alice], code: 4001, reason: "session revoked"),
        .sessionAccepted(alice, user: UserInfo(username: "alice", email: "a@example.com"), expiresAt: 1_766_304_000_000),
        .authFailed(alice, CoreError(.invalidToken, "unknown token")),
        .feedEvent(.posted(post), to: [alice]),
        .feedEvent(.liked(post: 9, author: "alice", user: "bob", liked: true, likes: 2, time: 6), to: [alice, bob]),
        .feedEvent(.commented(post: 9, author: "alice", comment: comment, comments: 1), to: [alice]),
        .feedEvent(.deleted(post: 9, author: "alice", time: 7), to: [bob]),
        .pushNotification(
            PushNotification(
                user: "bob", kind: .chatMessage, title: "alice", body: .messageData(#"{"text":"hi"}"#), badge: 3, target: "huddle://chat/chat:alice~bob",
                id: "chat:alice~bob/3", from: "alice", time: 1_763_712_000_000)),
        .pushNotification(
            PushNotification(
                user: "bob", kind: PushKind(rawValue: "match"), title: "alice", body: .text("wants to run"), badge: 0, target: "huddle://matches",
                id: "inbox:bob/1", from: "alice", time: 1)),
        .memoryChanged(.created(memoryWithoutPoints), to: [alice]),
        .memoryChanged(.updated(memory), to: [alice]),
        .memoryChanged(.deleted(memory: 8), to: [alice]),
        .memoryChanged(.pointAdded(memory, point), to: [alice]),
        .memoryChanged(.pointUpdated(memory, point), to: [alice]),
        .memoryChanged(.pointDeleted(memoryWithoutPoints, point: 2), to: [alice]),
        .photoAccess(caller: bob, .uploadAllowed(user: "bob")),
        .photoAccess(caller: bob, .stored(hash: "ab12", size: 1_048_576, newlyOwned: true)),
        .photoAccess(caller: bob, .readAllowed(hash: "ab12", size: 10)),
        .photoAccess(caller: bob, .exportAllowed(user: "bob", document: .object([("photos", .array([.object([("hash", .string("ab12"))])]))]))),
        .photoAccess(caller: bob, .refused(CoreError(.invalidToken, "unknown token"))),
        .profileChanged(user: "alice", UserProfile(displayName: "Alice ☕", avatar: "ab12"), time: 5, to: [bob, alice]),
        .profileChanged(user: "alice", UserProfile(), time: 6, to: [alice]),
        .changePassword(
            alice, requestID: "8", username: "alice", credentials: Credentials(salt: [1], hash: [2], iterations: 1000), oldPassword: "old \"pw\"",
            newPassword: "new", revokeOthers: true, address: "192.0.2.1"),
        .mailPasswordReset(alice, requestID: "9", username: "alice", email: "a@example.com", expiresAt: 1_763_712_900_000),
        .hashResetPassword(alice, requestID: "10", username: "alice", codeHash: [0, 255], newPassword: "new", address: "2001:db8::1"),
        .reply(alice, requestID: "5", .profile(user: "alice", UserProfile(displayName: "A"))),
        .reply(alice, requestID: "6", .sessions([SessionEntry(id: "00ff", device: nil, createdAt: 1, lastSeenAt: 2, expiresAt: 3, connected: true, current: false)], total: 4)),
        .feedEvent(.commented(post: 9, author: "alice", comment: FeedComment(id: 2, author: "bob", text: "x", time: 8, authorProfile: UserProfile(avatar: "ab12")), comments: 2), to: [alice]),
        .reportFiled(ModerationReport(
            id: 7, reporter: "alice", target: .message(channel: "chat:alice~bob", offset: 3), user: "bob", reason: "spam", text: "again \"x\"",
            content: #"{"text":"hi"}"#, time: 1_763_800_000_000)),
        .reportFiled(ModerationReport(
            id: 8, reporter: "alice", target: .user("bob"), user: "bob", reason: "other", text: "", content: nil, time: 1,
            resolution: ReportResolution(action: "dismissed", note: "", time: 2))),
        // Moderation and deletion.
        .deliver(Publication(channel: "room:lobby", epoch: "e1", offset: 4, type: "", from: nil, data: "", time: 8, removed: true), to: [bob]),
        .verifyAccountDeletion(
            alice, requestID: "5", username: "alice", credentials: Credentials(salt: [0, 255], hash: [1, 2, 3], iterations: 600_000), password: "pw",
            address: "192.0.2.1"),
        .removePhotoFiles([String(repeating: "ab", count: 32)]),
    ]

    /// Every case of `CoreOutput`, by name. The switch below has no `default:`, so a new case
    /// does not compile until it is named here, and `everyCaseHasASample` then wants a sample.
    enum Case: CaseIterable {
        case reply, deliver, typing, presenceChanged, localPresence, verifyPassword, hashNewPassword, closeConnections, sessionAccepted, authFailed, feedEvent
        case pushNotification, memoryChanged, photoAccess, reportFiled
        case profileChanged
        case changePassword, mailPasswordReset, hashResetPassword
        case verifyAccountDeletion, removePhotoFiles

        init(_ output: CoreOutput) {
            switch output {
            case .reply: self = .reply
            case .deliver: self = .deliver
            case .typing: self = .typing
            case .presenceChanged: self = .presenceChanged
            case .localPresence: self = .localPresence
            case .verifyPassword: self = .verifyPassword
            case .hashNewPassword: self = .hashNewPassword
            case .closeConnections: self = .closeConnections
            case .sessionAccepted: self = .sessionAccepted
            case .authFailed: self = .authFailed
            case .feedEvent: self = .feedEvent
            case .pushNotification: self = .pushNotification
            case .memoryChanged: self = .memoryChanged
            case .photoAccess: self = .photoAccess
            case .profileChanged: self = .profileChanged
            case .changePassword: self = .changePassword
            case .mailPasswordReset: self = .mailPasswordReset
            case .hashResetPassword: self = .hashResetPassword
            case .reportFiled: self = .reportFiled
            case .verifyAccountDeletion: self = .verifyAccountDeletion
            case .removePhotoFiles: self = .removePhotoFiles
            }
        }
    }

    @Test func everyCaseHasASample() {
        let sampled = Set(Self.samples.map(Case.init))
        #expect(Case.allCases.filter { !sampled.contains($0) } == [])
    }

    @Test(arguments: samples) func readingWhatWasWrittenGivesTheOutputBack(_ output: CoreOutput) {
        #expect(CoreOutput(encoded: output.encoded()) == output)
    }

    /// A format change must be deliberate: these bytes are what a peer reads.
    @Test func anOutputIsWrittenAsPinned() {
        let bytes = CoreOutput.reply(Self.alice, requestID: "1", .published(epoch: "e1", offset: 3, time: 1_763_712_000_000)).encoded()
        #expect(String(decoding: bytes, as: UTF8.self)
            == #"{"reply":{"connection":{"loop":2,"serial":9000000001},"reply":{"published":{"epoch":"e1","offset":3,"time":1763712000000}},"requestID":"1"}}"#)
        let close = CoreOutput.closeConnections([Self.bob], code: 1013, reason: "storage unavailable").encoded()
        #expect(String(decoding: close, as: UTF8.self)
            == #"{"closeConnections":{"_0":[{"loop":0,"serial":7}],"code":1013,"reason":"storage unavailable"}}"#)
    }

    @Test func whatEncodedDidNotMakeIsRefused() {
        for text in [
            "", "[]", "{}", #"{"nope":{}}"#, #"{"typing":{"channel":"c","user":"u"}}"#, #"{"typing":{"channel":"c","user":"u","to":[{"loop":0}]}}"#,
            #"{"typing":{"channel":"c","user":"u","to":[]},"deliver":{}}"#, #"{"closeConnections":{"_0":[],"code":65536,"reason":""}}"#,
            #"{"closeConnections":{"_0":[],"code":-1,"reason":""}}"#, #"{"reply":{"reply":{"nope":{}}}}"#,
            #"{"photoAccess":{"caller":{"loop":0,"serial":-1},"_1":{"uploadAllowed":{"user":"u"}}}}"#,
            #"{"memoryChanged":{"_0":{"created":{"_0":{"id":1}}},"to":[]}}"#, #"{"typing":{"channel":"c","user":"u","to":[]}"#,
            String(repeating: "[", count: 10_000),
        ] {
            #expect(CoreOutput(encoded: Array(text.utf8)) == nil, "\(text.prefix(80))")
        }
    }
}

extension CoreOutput: CustomTestStringConvertible {
    public var testDescription: String { "\(self)".prefix(60).description }
}
