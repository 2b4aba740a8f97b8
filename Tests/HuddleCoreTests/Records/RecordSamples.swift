import HuddleProtocol
@testable import HuddleCore

/// A fixed set of values for the log-format golden files: one of every `CoreCommand` case, one
/// `keepResult` per `CoreReply` case, and the durable state the commands build. Changing a
/// value here changes the golden files: do so only together with a deliberate format change.
enum RecordSamples {
    static let hash: [UInt8] = [0, 1, 2, 254, 255]
    static let photo = String(repeating: "ab", count: 32)
    static let position = MemoryPosition(latitude: 38.71, longitude: -9.125)
    static let point = MemoryPoint(id: 1, time: 1_746_400_000_000, position: position, placeName: "Alfama", note: "tram \"28\"", photos: [photo])
    static let place = Place(id: 1, label: "Home", latitude: 51.5, longitude: -0.125, radius: 100)
    static let comment = FeedComment(id: 1, author: "bob", text: "me!", time: 1_700_000_000_500)
    static let post = FeedPost(
        id: 1, author: "alice", text: "coffee? ü/😀", activity: "Coffee", at: 1_900_000_000_000, time: 1_700_000_000_400, likes: 1, liked: true,
        comments: 1, recentComments: [comment])
    static let publication = Publication(
        channel: "chat:alice~bob", epoch: "e1", offset: 2, type: "message", from: "alice", data: #"{"text":"hi\n"}"#, time: 1_700_000_000_300,
        clientID: "m-2")
    static let whereabouts = DecidedPlace(label: "Home", placeID: 1, since: 1_700_000_000_000)
    static let status = ActivityStatus(activity: "Coffee", audience: ["bob", "carol"], since: 1_700_000_000_000, expiresAt: 1_700_007_200_000)
    static var memory: StoredMemory {
        var memory = StoredMemory(id: 1, owner: "alice", title: "Lisbon", date: "2025-05-05", placeName: "Alfama", position: position, createdAt: 1_700_000_000_000)
        memory.put(point)
        return memory
    }
    static let location = LocationState(
        current: .place(id: 1), since: 1_700_000_000_000, lastObservationTime: 1_700_000_100_000,
        track: [LocationFix(latitude: 51.5, longitude: -0.125, accuracy: 20, time: 1_700_000_100_000)], lastFastTime: nil)

    /// Every reply case, as kept results carry them.
    static let replies: [CoreReply] = [
        .failure(CoreError(.tooManyRequests, "slow down", retryAfterMilliseconds: 250)),
        .failure(CoreError(.postNotFound, "no such post")),
        .account(user: UserInfo(username: "alice", email: "alice@example.com"), expiresAt: 1_800_000_000_000, isNewSession: true),
        .revoked(count: 2),
        .subscribed(channel: "chat:alice~bob", epoch: "e1", offset: 2, recovered: true, publications: [publication]),
        .subscribed(channel: "room:lobby", epoch: "e2", offset: 0, recovered: nil, publications: []),
        .unsubscribed,
        .published(epoch: "e1", offset: 2, time: 1_700_000_000_300),
        .history(channel: "chat:alice~bob", epoch: "e1", offset: 2, publications: [publication], nextBefore: 2),
        .history(channel: "room:lobby", epoch: "e2", offset: 0, publications: [], nextBefore: nil),
        .presence(channel: "room:lobby", users: ["alice", "bob"]),
        .disconnected(count: 1),
        .done,
        .users(["alice", "alicia"]),
        .friendRequestSent(becameFriends: false),
        .friendRequests(incoming: [FriendRequest(from: "bob", to: "alice", message: "hi", time: 5)], outgoing: []),
        .friends([FriendStatus(username: "bob", online: true)]),
        .alreadyPublished(epoch: "e1", offset: 2, time: 1_700_000_000_300),
        .duplicate(.friendRequestSent(becameFriends: true)),
        .readMarker(channel: "chat:alice~bob", read: 2, unread: 0, badge: 3),
        .unread(rooms: [RoomUnread(channel: "chat:alice~bob", offset: 2, read: 1, unread: 1)], total: 1),
        .feedPost(post),
        .feedPage(posts: [post], nextBefore: nil),
        .postLike(post: 1, liked: true, likes: 1),
        .postComment(post: 1, comment: comment, comments: 1),
        .postComments(post: 1, comments: [comment], nextBefore: 1),
        .activities(available: ["Coffee", "Gym"], mine: [status]),
        .activityStatus(ActivityStatus(activity: "Gym", audience: nil, since: 1, expiresAt: 2)),
        .matches([ActivityMatch(user: "bob", activity: "Coffee", since: 1_700_000_000_000)]),
        .place(place),
        .places([place]),
        .location(whereabouts, changed: true, ignored: false),
        .whereabouts(user: "alice", DecidedPlace(label: "unknown", placeID: nil, since: nil)),
        .locationSubscribed(channel: "loc:alice", epoch: "e3", offset: 1, recovered: false, publications: [], current: whereabouts),
        .memory(memory, includingPoints: true),
        .memories([memory]),
        .memoryPoint(memory: 1, point),
        .keptMemory(memory, pointCount: 1),
    ]

    /// Every command case; applied in order to an empty core they build `state`.
    static var commands: [CoreCommand] {
        let credentials = Credentials(salt: [9, 8, 7], hash: hash, iterations: 1000)
        let t: Int64 = 1_700_000_000_000
        var commands: [CoreCommand] = [
            .signUp(username: "alice", email: "alice@example.com", credentials: credentials, session: NewSession(tokenHash: hash, expiresAt: t + 1000, device: "phone"), time: t),
            .signUp(username: "bob", email: "bob@example.com", credentials: credentials, session: NewSession(tokenHash: [1], expiresAt: t + 1000), time: t),
            .signUp(username: "carol", email: "carol@example.com", credentials: credentials, session: NewSession(tokenHash: [2], expiresAt: t + 1000), time: t),
            .openSession(username: "alice", session: NewSession(tokenHash: [3], expiresAt: t + 2000, device: nil), time: t + 1),
            .revokeSessions(username: "alice", tokenHashes: [[3]], time: t + 2),
            .purgeExpiredSessions(tokenHashes: [[4], [5, 6]], time: t + 3),
            .publish(channel: "room:lobby", from: "alice", type: "note", data: #"{"text":"hi \"room\" / ü","n":1}"#, time: t + 4),
            .publish(channel: "inbox:bob", from: nil, type: "friend_request", data: #"{"from":"alice"}"#, time: t + 5),
            .trimExpiredHistory(channels: ["room:lobby", "room:old"], time: t + 6),
            .sendFriendRequest(from: "alice", to: "bob", message: "hi bob", time: t + 7),
            .acceptFriendRequest(from: "alice", to: "bob", time: t + 8),
            .sendFriendRequest(from: "carol", to: "alice", message: "", time: t + 9),
            .dropFriendRequest(from: "carol", to: "alice", time: t + 10),
            .acceptFriendRequest(from: "carol", to: "bob", time: t + 11),
            .removeFriend(user: "bob", friend: "carol", time: t + 12),
            .publishWithClientID(channel: "chat:alice~bob", from: "alice", type: "message", data: #"{"text":"hello"}"#, clientID: "m-1", time: t + 13),
            .markRead(user: "bob", channel: "chat:alice~bob", offset: 1, time: t + 14),
            .createPost(id: 1, author: "alice", text: "coffee? ü/😀", activity: "Coffee", at: 1_900_000_000_000, time: t + 15),
            .createPost(id: 2, author: "bob", text: "plain", activity: nil, at: nil, time: t + 16),
            .setLike(post: 1, user: "bob", liked: true, time: t + 17),
            .addComment(post: 1, id: 1, author: "bob", text: "me!", time: t + 18),
            .deletePost(post: 2, author: "bob", time: t + 19),
            .setActivity(user: "alice", activity: "Coffee", audience: nil, expiresAt: t + 7_200_000, time: t + 20),
            .setActivity(user: "bob", activity: "Coffee", audience: ["alice"], expiresAt: t + 7_200_000, time: t + 21),
            .startMatch(user: "alice", partner: "bob", activity: "Coffee", time: t + 21),
            .setActivity(user: "bob", activity: "Gym", audience: ["alice"], expiresAt: t + 7_200_000, time: t + 22),
            .clearActivity(user: "bob", activity: "Gym", reason: .off, time: t + 23),
            .setActivity(user: "alice", activity: "Gym", audience: nil, expiresAt: t + 7_200_000, time: t + 24),
            .startMatch(user: "alice", partner: "carol", activity: "Gym", time: t + 24),
            .endMatch(user: "alice", partner: "carol", activity: "Gym", reason: .unfriended, time: t + 25),
            .setPlace(user: "alice", place: place, time: t + 26),
            .setPlace(user: "alice", place: Place(id: 2, label: "Work", latitude: 51.52, longitude: -0.09, radius: 150), time: t + 27),
            .removePlace(user: "alice", placeID: 2, time: t + 28),
            .updateLocation(user: "alice", location: location, time: t + 29),
            .updateLocation(user: "bob", location: LocationState(current: .traveling, since: nil, lastObservationTime: nil, track: [], lastFastTime: t), time: t + 29),
            .createMemory(owner: "alice", id: 1, title: "Lisbon", date: "2025-05-05", placeName: "Alfama", position: position, time: t + 30),
            .updateMemory(owner: "alice", id: 1, title: "Lisbon trip", date: "2025-05-05", placeName: "", position: nil, time: t + 31),
            .addPhotoOwner(owner: "alice", hash: photo, size: 2000, time: t + 32),
            .putMemoryPoint(owner: "alice", memory: 1, point: point, time: t + 33),
            .putMemoryPoint(owner: "alice", memory: 1, point: MemoryPoint(id: 2, time: 5, position: nil, placeName: "", note: "", photos: []), time: t + 34),
            .deleteMemoryPoint(owner: "alice", memory: 1, point: 2, time: t + 35),
            .createMemory(owner: "alice", id: 2, title: "Doomed", date: "2024-01-01", placeName: "", position: nil, time: t + 36),
            .deleteMemory(owner: "alice", id: 2, time: t + 37),
        ]
        for (index, reply) in replies.enumerated() {
            commands.append(.keepResult(user: "alice", op: "op\(index)", clientID: "k-\(index)", reply: reply, time: t + 40 + Int64(index)))
        }
        commands.append(.forgetKeptResults(before: t + 41, time: t + 100))
        return commands
    }

    /// The durable state `commands` build, with a kept-results limit that keeps them all.
    static var state: CoreDurableState {
        var configuration = CoreConfiguration()
        configuration.keptResultsPerUser = 100
        configuration.keptResultMilliseconds = 1_000_000_000
        let core = HuddleCore(configuration: configuration)
        for command in commands { core.apply(command) }
        return core.durableState
    }
}
