import HuddleCore
import HuddleProtocol

/// The requests the tests send, spelled as calls naming what the server asks (as the core's
/// request cases were spelled before the envelope): each builds the envelope the server builds
/// for it — a client's op with its connection and id, or one of the server's own requests.
extension CoreRequest {
    private static func op(_ ref: ConnectionRef?, _ requestID: String, _ operation: Operation, clientID: String? = nil) -> CoreRequest {
        CoreRequest(connection: ref, requestID: requestID, clientID: clientID, .operation(operation))
    }

    // Accounts.

    static func beginSignUp(_ ref: ConnectionRef, requestID: String, username: String, email: String, password: String, address: String) -> CoreRequest {
        CoreRequest(connection: ref, requestID: requestID, .beginSignUp(username: username, email: email, password: password, address: address))
    }

    static func signUp(
        _ ref: ConnectionRef, requestID: String, username: String, email: String, passwordLength: Int, passwordEqualsUsername: Bool,
        address: String, credentials: Credentials, session: NewSession
    ) -> CoreRequest {
        CoreRequest(
            connection: ref, requestID: requestID,
            .signUp(
                username: username, email: email, passwordLength: passwordLength, passwordEqualsUsername: passwordEqualsUsername,
                address: address, credentials: credentials, session: session))
    }

    static func beginLogin(_ ref: ConnectionRef, requestID: String, login: String, address: String, password: String) -> CoreRequest {
        CoreRequest(connection: ref, requestID: requestID, .beginLogin(login: login, address: address, password: password))
    }

    static func finishLogin(
        _ ref: ConnectionRef, requestID: String, username: Username?, passwordMatched: Bool, address: String, session: NewSession
    ) -> CoreRequest {
        CoreRequest(
            connection: ref, requestID: requestID,
            .finishLogin(username: username, passwordMatched: passwordMatched, address: address, session: session))
    }

    static func authenticate(_ ref: ConnectionRef, requestID: String?, tokenHash: [UInt8]) -> CoreRequest {
        CoreRequest(connection: ref, requestID: requestID, .authenticate(tokenHash: tokenHash))
    }

    static func logout(_ ref: ConnectionRef, requestID: String, all: Bool) -> CoreRequest { op(ref, requestID, .logout(all: all)) }
    static func whoami(_ ref: ConnectionRef, requestID: String) -> CoreRequest { op(ref, requestID, .whoami) }

    // Channels.

    static func subscribe(_ ref: ConnectionRef, requestID: String, channel: String, since: ChannelPosition?) -> CoreRequest {
        op(ref, requestID, .subscribe(channel: channel, since: since.map { Position(epoch: $0.epoch, offset: $0.offset) }))
    }

    static func unsubscribe(_ ref: ConnectionRef, requestID: String, channel: String) -> CoreRequest {
        op(ref, requestID, .unsubscribe(channel: channel))
    }

    static func publish(_ ref: ConnectionRef, requestID: String, channel: String, type: String, data: String, clientID: String? = nil) -> CoreRequest {
        op(ref, requestID, .publish(channel: channel, type: type, data: data), clientID: clientID)
    }

    static func history(_ ref: ConnectionRef?, requestID: String, channel: String, before: UInt64?, limit: Int) -> CoreRequest {
        op(ref, requestID, .history(channel: channel, before: before, limit: limit))
    }

    static func presence(_ ref: ConnectionRef, requestID: String, channel: String) -> CoreRequest {
        op(ref, requestID, .presence(channel: channel))
    }

    static func serverPublish(requestID: String, channel: String, type: String, data: String) -> CoreRequest {
        CoreRequest(requestID: requestID, .serverPublish(channel: channel, type: type, data: data))
    }

    static func disconnectUser(requestID: String, username: String) -> CoreRequest {
        CoreRequest(requestID: requestID, .disconnectUser(username: username))
    }

    static func removeContent(requestID: String, _ content: RemovedContent) -> CoreRequest {
        CoreRequest(requestID: requestID, .removeContent(content))
    }

    static func deleteUser(requestID: String, username: String) -> CoreRequest {
        CoreRequest(requestID: requestID, .deleteUser(username: username))
    }

    // Friends.

    static func searchUsers(_ ref: ConnectionRef, requestID: String, prefix: String, limit: Int) -> CoreRequest {
        op(ref, requestID, .userSearch(prefix: prefix, limit: limit))
    }

    static func sendFriendRequest(_ ref: ConnectionRef, requestID: String, user: String, message: String) -> CoreRequest {
        op(ref, requestID, .friendRequest(user: user, message: message))
    }

    static func listFriendRequests(_ ref: ConnectionRef, requestID: String) -> CoreRequest { op(ref, requestID, .friendRequests) }

    static func answerFriendRequest(_ ref: ConnectionRef, requestID: String, user: String, accept: Bool) -> CoreRequest {
        op(ref, requestID, accept ? .friendAccept(user: user) : .friendDecline(user: user))
    }

    static func cancelFriendRequest(_ ref: ConnectionRef, requestID: String, user: String) -> CoreRequest {
        op(ref, requestID, .friendCancel(user: user))
    }

    static func removeFriend(_ ref: ConnectionRef, requestID: String, user: String) -> CoreRequest { op(ref, requestID, .friendRemove(user: user)) }
    static func block(_ ref: ConnectionRef, requestID: String, user: String) -> CoreRequest { op(ref, requestID, .block(user: user)) }
    static func unblock(_ ref: ConnectionRef, requestID: String, user: String) -> CoreRequest { op(ref, requestID, .unblock(user: user)) }
    static func report(_ ref: ConnectionRef, requestID: String, target: ReportTarget, reason: String, text: String) -> CoreRequest {
        op(ref, requestID, .report(target: target, reason: reason, text: text))
    }
    static func listFriends(_ ref: ConnectionRef, requestID: String) -> CoreRequest { op(ref, requestID, .friends) }

    // Chat.

    static func markRead(_ ref: ConnectionRef, requestID: String, channel: String, offset: UInt64) -> CoreRequest {
        op(ref, requestID, .markRead(channel: channel, offset: offset))
    }

    static func unreadCounts(_ ref: ConnectionRef, requestID: String) -> CoreRequest { op(ref, requestID, .unread) }
    static func typing(_ ref: ConnectionRef, requestID: String, channel: String) -> CoreRequest { op(ref, requestID, .typing(channel: channel)) }

    // Feed.

    static func createPost(_ ref: ConnectionRef, requestID: String, text: String, activity: String?, at: Int64?) -> CoreRequest {
        op(ref, requestID, .post(text: text, activity: activity, at: at))
    }

    static func listFeed(_ ref: ConnectionRef, requestID: String, before: UInt64?, limit: Int) -> CoreRequest {
        op(ref, requestID, .feed(before: before, limit: limit))
    }

    static func likePost(_ ref: ConnectionRef, requestID: String, post: UInt64, liked: Bool?) -> CoreRequest {
        op(ref, requestID, .like(post: post, liked: liked))
    }

    static func commentOnPost(_ ref: ConnectionRef, requestID: String, post: UInt64, text: String) -> CoreRequest {
        op(ref, requestID, .comment(post: post, text: text))
    }

    static func listComments(_ ref: ConnectionRef, requestID: String, post: UInt64, before: UInt64?, limit: Int) -> CoreRequest {
        op(ref, requestID, .comments(post: post, before: before, limit: limit))
    }

    static func deletePost(_ ref: ConnectionRef, requestID: String, post: UInt64) -> CoreRequest { op(ref, requestID, .postDelete(post: post)) }

    // Activities.

    static func listActivities(_ ref: ConnectionRef, requestID: String) -> CoreRequest { op(ref, requestID, .activities) }

    static func activityOn(_ ref: ConnectionRef, requestID: String, activity: String, friends: [String]?, expiresInSeconds: Int64?) -> CoreRequest {
        op(ref, requestID, .activityOn(activity: activity, friends: friends, expiresIn: expiresInSeconds))
    }

    static func activityOff(_ ref: ConnectionRef, requestID: String, activity: String) -> CoreRequest {
        op(ref, requestID, .activityOff(activity: activity))
    }

    static func listMatches(_ ref: ConnectionRef, requestID: String, byActivity: Bool) -> CoreRequest {
        op(ref, requestID, .matches(byActivity: byActivity))
    }

    // Places.

    static func setPlace(
        _ ref: ConnectionRef, requestID: String, id: UInt64?, label: String, latitude: Double, longitude: Double, radius: Double
    ) -> CoreRequest {
        op(ref, requestID, .placeSet(id: id, label: label, latitude: latitude, longitude: longitude, radius: radius))
    }

    static func removePlace(_ ref: ConnectionRef, requestID: String, id: UInt64) -> CoreRequest { op(ref, requestID, .placeRemove(id: id)) }
    static func listPlaces(_ ref: ConnectionRef, requestID: String, user: String?) -> CoreRequest { op(ref, requestID, .places(user: user)) }

    static func reportLocation(
        _ ref: ConnectionRef, requestID: String, latitude: Double, longitude: Double, accuracy: Double, time: Int64
    ) -> CoreRequest {
        op(ref, requestID, .locationFix(latitude: latitude, longitude: longitude, accuracy: accuracy, time: time))
    }

    static func reportRegion(_ ref: ConnectionRef, requestID: String, placeID: UInt64, entered: Bool, time: Int64) -> CoreRequest {
        op(ref, requestID, .region(placeID: placeID, entered: entered, time: time))
    }

    static func locate(_ ref: ConnectionRef, requestID: String, user: String) -> CoreRequest { op(ref, requestID, .whereIs(user: user)) }

    // Memories: the tests give core fields; the protocol's arguments carry the same values.

    static func createMemory(_ ref: ConnectionRef, requestID: String, _ fields: MemoryFields) -> CoreRequest {
        op(ref, requestID, .memoryCreate(MemoryArguments(fields)))
    }

    static func updateMemory(_ ref: ConnectionRef, requestID: String, memory: UInt64, _ fields: MemoryFields) -> CoreRequest {
        op(ref, requestID, .memoryUpdate(memory: memory, MemoryArguments(fields)))
    }

    static func deleteMemory(_ ref: ConnectionRef, requestID: String, memory: UInt64) -> CoreRequest {
        op(ref, requestID, .memoryDelete(memory: memory))
    }

    static func listMemories(_ ref: ConnectionRef, requestID: String) -> CoreRequest { op(ref, requestID, .memories) }
    static func readMemory(_ ref: ConnectionRef, requestID: String, memory: UInt64) -> CoreRequest { op(ref, requestID, .memory(memory: memory)) }

    static func addMemoryPoint(_ ref: ConnectionRef, requestID: String, memory: UInt64, _ fields: MemoryPointFields) -> CoreRequest {
        op(ref, requestID, .pointAdd(memory: memory, MemoryPointArguments(fields)))
    }

    static func updateMemoryPoint(
        _ ref: ConnectionRef, requestID: String, memory: UInt64, point: UInt64, _ fields: MemoryPointFields
    ) -> CoreRequest {
        op(ref, requestID, .pointUpdate(memory: memory, point: point, MemoryPointArguments(fields)))
    }

    static func deleteMemoryPoint(_ ref: ConnectionRef, requestID: String, memory: UInt64, point: UInt64) -> CoreRequest {
        op(ref, requestID, .pointDelete(memory: memory, point: point))
    }

    // Photos.

    static func authorizePhotoUpload(caller: ConnectionRef, tokenHash: [UInt8], size: Int) -> CoreRequest {
        CoreRequest(.authorizePhotoUpload(caller: caller, tokenHash: tokenHash, size: size))
    }

    static func recordPhoto(caller: ConnectionRef, tokenHash: [UInt8], hash: String, size: Int) -> CoreRequest {
        CoreRequest(.recordPhoto(caller: caller, tokenHash: tokenHash, hash: hash, size: size))
    }

    static func authorizePhotoRead(caller: ConnectionRef, tokenHash: [UInt8], hash: String) -> CoreRequest {
        CoreRequest(.authorizePhotoRead(caller: caller, tokenHash: tokenHash, hash: hash))
    }

    static func exportArchive(caller: ConnectionRef, tokenHash: [UInt8]) -> CoreRequest {
        CoreRequest(.exportArchive(caller: caller, tokenHash: tokenHash))
    }

    // Lifecycle.

    static func connectionOpened(_ ref: ConnectionRef, address: String) -> CoreRequest {
        CoreRequest(connection: ref, .connectionOpened(address: address))
    }

    static func connectionClosed(_ ref: ConnectionRef) -> CoreRequest { CoreRequest(connection: ref, .connectionClosed) }

    // Keyed writes: the write's envelope with its `client_id` (`op` is the write's own name).

    static func keyed(_ ref: ConnectionRef, requestID: String, op name: String, clientID: String, _ write: CoreRequest) -> CoreRequest {
        precondition(write.connection == ref && write.requestID == requestID, "a keyed write wraps its own request")
        if case .operation(let operation) = write.body { precondition(operation.name == name, "op \(name) keys \(operation.name)") }
        var keyed = write
        keyed.clientID = clientID
        return keyed
    }

    // Profiles and sessions.
    static func readProfile(_ ref: ConnectionRef, requestID: String) -> CoreRequest { op(ref, requestID, .profile) }
    static func setProfile(_ ref: ConnectionRef, requestID: String, displayName: String?, avatar: String?) -> CoreRequest {
        op(ref, requestID, .profileSet(displayName: displayName, avatar: avatar))
    }
    static func listSessions(_ ref: ConnectionRef, requestID: String) -> CoreRequest { op(ref, requestID, .sessions) }
    static func revokeSession(_ ref: ConnectionRef, requestID: String, id: String) -> CoreRequest { op(ref, requestID, .sessionRevoke(id: id)) }
}

extension MemoryArguments {
    /// The wire arguments that give these fields.
    init(_ fields: MemoryFields) {
        self.init(title: fields.title, date: fields.date, placeName: fields.placeName, position: MemoryPositionArgument(fields.position))
    }
}

extension MemoryPointArguments {
    init(_ fields: MemoryPointFields) {
        self.init(
            time: fields.time, position: MemoryPositionArgument(fields.position), placeName: fields.placeName, note: fields.note,
            photos: fields.photos)
    }
}

extension MemoryPositionArgument {
    init(_ edit: MemoryPositionEdit?) {
        switch edit {
        case nil: self = .absent
        case .remove?: self = .null
        case .set(let position)?: self = .coordinates(latitude: position.latitude, longitude: position.longitude)
        }
    }
}
