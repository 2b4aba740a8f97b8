import HuddleProtocol

/// The product's state machine: accounts, sessions, channels with offsets and history,
/// subscriptions and presence.
///
/// It does no I/O, reads no clock and draws no random numbers: the server supplies the time of
/// every request and everything random inside the requests. One thread (the core thread)
/// drives it, so it takes no locks. Durable changes happen only by applying `CoreCommand`s —
/// `handle` applies the ones it makes and returns them for the log, and `apply` re-applies
/// logged ones — so replaying the log rebuilds exactly `durableState`.
public final class HuddleCore {
    public let configuration: CoreConfiguration
    public internal(set) var durableState: CoreDurableState

    var connections = ConnectionRegistry()
    var subscriptions = Subscriptions()
    /// Connections whose write queue is behind while they still read (the server reports each
    /// change): publishes to their channels are refused `busy` until they catch up.
    var readersBehind = Set<ConnectionRef>()
    var presence: PresenceTracker
    var loginThrottle: LoginThrottle
    var friendRequestThrottle: FriendRequestThrottle
    var roomQuota: RoomQuota
    var passwordHashes = PasswordHashAdmission()
    /// Derived from the durable sessions (rebuilt on restore), so `tick` finds purgeable ones
    /// without scanning; entries of sessions revoked since are skipped when popped.
    var sessionPurges = MinHeap<SessionPurge>()
    /// The same sessions by expiry: `tick` closes the connections still signed in with one that
    /// expired, so a connection never outlives its token.
    var sessionExpiries = MinHeap<SessionPurge>()
    /// When each channel's oldest publication expires (derived, rebuilt on restore), so `tick`
    /// trims expired history without scanning every channel (`HistoryExpiries`).
    var historyExpiries = HistoryExpiries()
    /// Derived from the durable accounts, for `user_search`.
    var usernames: UsernameIndex
    /// When `tick` next forgets expired kept results (the first tick after a start does).
    var nextKeptResultSweep: Int64 = .min

    public convenience init(configuration: CoreConfiguration = .init()) {
        self.init(configuration: configuration, restoring: CoreDurableState())
    }

    public init(configuration: CoreConfiguration = .init(), restoring state: CoreDurableState) {
        self.configuration = configuration
        durableState = state
        presence = PresenceTracker(graceMilliseconds: configuration.presenceGraceMilliseconds)
        loginThrottle = LoginThrottle(configuration: configuration)
        friendRequestThrottle = FriendRequestThrottle(configuration: configuration)
        roomQuota = RoomQuota(configuration: configuration)
        usernames = UsernameIndex(state.accounts)
        for session in state.sessions.byTokenHash.values { schedulePurge(of: session) }
        scheduleEveryHistoryExpiry()
    }

    /// Replaces the durable state and keeps the ephemeral one (connections, subscriptions,
    /// presence). The server's rollback: when the log could not record a turn's commands, it
    /// rebuilds the durable state from disk and puts it back here, so memory never holds a
    /// change that a restart would not.
    public func restoreDurableState(_ state: CoreDurableState) {
        durableState = state
        sessionPurges = MinHeap<SessionPurge>()
        sessionExpiries = MinHeap<SessionPurge>()
        usernames = UsernameIndex(state.accounts)
        for session in state.sessions.byTokenHash.values { schedulePurge(of: session) }
        historyExpiries = HistoryExpiries()
        scheduleEveryHistoryExpiry()
    }

    /// Handles one request at `time` (milliseconds since the Unix epoch, from the server).
    public func handle(_ request: CoreRequest, at time: Int64) -> CoreStep {
        var step = CoreStep()
        switch request {
        case let .beginSignUp(connection, requestID, username, email, password, address):
            beginSignUp(connection, requestID: requestID, username: username, email: email, password: password, address: address, into: &step)
        case let .signUp(connection, requestID, username, email, passwordLength, passwordEqualsUsername, address, credentials, session):
            passwordHashes.end(.signUp, from: address)
            signUp(
                connection, requestID: requestID, username: username, email: email, passwordLength: passwordLength,
                passwordEqualsUsername: passwordEqualsUsername, credentials: credentials, session: session,
                at: time, into: &step
            )
        case let .beginLogin(connection, requestID, login, address, password):
            beginLogin(connection, requestID: requestID, login: login, address: address, password: password, at: time, into: &step)
        case let .finishLogin(connection, requestID, username, passwordMatched, address, session):
            passwordHashes.end(.login, from: address)
            finishLogin(connection, requestID: requestID, username: username, passwordMatched: passwordMatched, session: session, at: time, into: &step)
        case let .authenticate(connection, requestID, tokenHash):
            authenticate(connection, requestID: requestID, tokenHash: tokenHash, at: time, into: &step)
        case let .logout(connection, requestID, all):
            logout(connection, requestID: requestID, all: all, at: time, into: &step)
        case let .whoami(connection, requestID):
            whoami(connection, requestID: requestID, into: &step)
        case let .subscribe(connection, requestID, channel, since):
            subscribe(connection, requestID: requestID, channel: channel, since: since, at: time, into: &step)
        case let .unsubscribe(connection, requestID, channel):
            unsubscribe(connection, requestID: requestID, channel: channel, into: &step)
        case let .publish(connection, requestID, channel, type, data, clientID):
            publish(connection, requestID: requestID, channel: channel, type: type, data: data, clientID: clientID, at: time, into: &step)
        case let .history(connection, requestID, channel, before, limit):
            history(connection, requestID: requestID, channel: channel, before: before, limit: limit, at: time, into: &step)
        case let .presence(connection, requestID, channel):
            roomPresence(connection, requestID: requestID, channel: channel, into: &step)
        case let .serverPublish(requestID, channel, type, data):
            serverPublish(requestID: requestID, channel: channel, type: type, data: data, at: time, into: &step)
        case let .disconnectUser(requestID, username):
            disconnectUser(requestID: requestID, username: username, at: time, into: &step)
        case let .searchUsers(connection, requestID, prefix, limit):
            searchUsers(connection, requestID: requestID, prefix: prefix, limit: limit, into: &step)
        case let .sendFriendRequest(connection, requestID, user, message):
            sendFriendRequest(connection, requestID: requestID, user: user, message: message, at: time, into: &step)
        case let .listFriendRequests(connection, requestID):
            listFriendRequests(connection, requestID: requestID, into: &step)
        case let .answerFriendRequest(connection, requestID, user, accept):
            answerFriendRequest(connection, requestID: requestID, user: user, accept: accept, at: time, into: &step)
        case let .cancelFriendRequest(connection, requestID, user):
            cancelFriendRequest(connection, requestID: requestID, user: user, at: time, into: &step)
        case let .removeFriend(connection, requestID, user):
            removeFriend(connection, requestID: requestID, user: user, at: time, into: &step)
        case let .listFriends(connection, requestID):
            listFriends(connection, requestID: requestID, into: &step)
        case let .markRead(connection, requestID, channel, offset):
            markRead(connection, requestID: requestID, channel: channel, offset: offset, at: time, into: &step)
        case let .unreadCounts(connection, requestID):
            unreadCounts(connection, requestID: requestID, into: &step)
        case let .typing(connection, requestID, channel):
            typing(connection, requestID: requestID, channel: channel, into: &step)
        // Feed.
        case let .createPost(connection, requestID, text, activity, at):
            createPost(connection, requestID: requestID, text: text, activity: activity, plannedAt: at, at: time, into: &step)
        case let .listFeed(connection, requestID, before, limit):
            listFeed(connection, requestID: requestID, before: before, limit: limit, into: &step)
        case let .likePost(connection, requestID, post, liked):
            likePost(connection, requestID: requestID, post: post, liked: liked, at: time, into: &step)
        case let .commentOnPost(connection, requestID, post, text):
            commentOnPost(connection, requestID: requestID, post: post, text: text, at: time, into: &step)
        case let .listComments(connection, requestID, post, before, limit):
            listComments(connection, requestID: requestID, post: post, before: before, limit: limit, into: &step)
        case let .deletePost(connection, requestID, post):
            deletePost(connection, requestID: requestID, post: post, at: time, into: &step)

        // Activities.
        case let .listActivities(connection, requestID):
            listActivities(connection, requestID: requestID, at: time, into: &step)
        case let .activityOn(connection, requestID, activity, friends, expiresInSeconds):
            activityOn(connection, requestID: requestID, activity: activity, friends: friends, expiresInSeconds: expiresInSeconds, at: time, into: &step)
        case let .activityOff(connection, requestID, activity):
            activityOff(connection, requestID: requestID, activity: activity, at: time, into: &step)
        case let .listMatches(connection, requestID, byActivity):
            listMatches(connection, requestID: requestID, byActivity: byActivity, at: time, into: &step)
        case .expireActivities:
            expireActivities(at: time, into: &step)

        // Places.
        case let .setPlace(connection, requestID, id, label, latitude, longitude, radius):
            setPlace(connection, requestID: requestID, id: id, label: label, latitude: latitude, longitude: longitude, radius: radius, at: time, into: &step)
        case let .removePlace(connection, requestID, id):
            removePlace(connection, requestID: requestID, id: id, at: time, into: &step)
        case let .listPlaces(connection, requestID, user):
            listPlaces(connection, requestID: requestID, user: user, into: &step)
        case let .reportLocation(connection, requestID, latitude, longitude, accuracy, reported):
            reportLocation(connection, requestID: requestID, fix: LocationFix(latitude: latitude, longitude: longitude, accuracy: accuracy, time: reported), at: time, into: &step)
        case let .reportRegion(connection, requestID, placeID, entered, reported):
            reportRegion(connection, requestID: requestID, placeID: placeID, entered: entered, reported: reported, at: time, into: &step)
        case let .locate(connection, requestID, user):
            locate(connection, requestID: requestID, user: user, into: &step)

        // Memories.
        case let .createMemory(connection, requestID, fields):
            createMemory(connection, requestID: requestID, fields, at: time, into: &step)
        case let .updateMemory(connection, requestID, memory, fields):
            updateMemory(connection, requestID: requestID, memory: memory, fields, at: time, into: &step)
        case let .deleteMemory(connection, requestID, memory):
            deleteMemory(connection, requestID: requestID, memory: memory, at: time, into: &step)
        case let .listMemories(connection, requestID):
            listMemories(connection, requestID: requestID, into: &step)
        case let .readMemory(connection, requestID, memory):
            readMemory(connection, requestID: requestID, memory: memory, into: &step)
        case let .addMemoryPoint(connection, requestID, memory, fields):
            addMemoryPoint(connection, requestID: requestID, memory: memory, fields, at: time, into: &step)
        case let .updateMemoryPoint(connection, requestID, memory, point, fields):
            updateMemoryPoint(connection, requestID: requestID, memory: memory, point: point, fields, at: time, into: &step)
        case let .deleteMemoryPoint(connection, requestID, memory, point):
            deleteMemoryPoint(connection, requestID: requestID, memory: memory, point: point, at: time, into: &step)
        case let .authorizePhotoUpload(caller, tokenHash, size):
            authorizePhotoUpload(caller, tokenHash: tokenHash, size: size, at: time, into: &step)
        case let .recordPhoto(caller, tokenHash, hash, size):
            recordPhoto(caller, tokenHash: tokenHash, hash: hash, size: size, at: time, into: &step)
        case let .authorizePhotoRead(caller, tokenHash, hash):
            authorizePhotoRead(caller, tokenHash: tokenHash, hash: hash, at: time, into: &step)

        case let .connectionOpened(connection, address):
            _ = connections.open(connection, address: address)
        case let .connectionClosed(connection):
            forget(connection, at: time)
        case .tick:
            tick(at: time, into: &step)
        case let .keyed(connection, requestID, op, clientID, write):
            handleKeyed(write, from: connection, requestID: requestID, op: op, clientID: clientID, at: time, into: &step)
        }
        return step
    }

    /// Applies a durable change: the replay path, and what `handle` does with the commands it
    /// makes. Commands are trusted (`handle` validated them before logging).
    public func apply(_ command: CoreCommand) {
        switch command {
        case let .signUp(username, email, credentials, session, time):
            durableState.accounts.insert(UserRecord(username: username, email: email, credentials: credentials, createdAt: time))
            usernames.insert(username)
            insertSession(session, of: username, at: time)
        case let .openSession(username, session, time):
            insertSession(session, of: username, at: time)
        case let .revokeSessions(username, tokenHashes, _):
            for tokenHash in tokenHashes { durableState.sessions.remove(tokenHash, ownedBy: username) }
        case let .purgeExpiredSessions(tokenHashes, _):
            for tokenHash in tokenHashes { durableState.sessions.remove(tokenHash) }
        case let .trimExpiredHistory(channels, time):
            for channel in channels {
                durableState.channels.trimExpired(channel, at: time, limit: historyLimit(of: channel))
                scheduleHistoryExpiry(of: channel)
            }
        case let .publish(channel, from, type, data, time):
            _ = appendPublication(to: channel, namespace: ChannelNamespace(prefixOf: channel), from: from, type: type, data: data, time: time)
        case let .sendFriendRequest(from, to, message, time):
            durableState.friendships.insert(FriendRequest(from: from, to: to, message: message, time: time))
        case let .acceptFriendRequest(from, to, _):
            durableState.friendships.befriend(from, to)
        case let .dropFriendRequest(from, to, _):
            durableState.friendships.removeRequest(from: from, to: to)
        case let .removeFriend(user, friend, _):
            durableState.friendships.unfriend(user, friend)
        case let .publishWithClientID(channel, from, type, data, clientID, time):
            _ = appendPublication(
                to: channel, namespace: ChannelNamespace(prefixOf: channel), from: from, type: type, data: data, clientID: clientID, time: time)
        case let .markRead(user, channel, offset, _):
            durableState.readMarkers.advance(user, in: channel, to: offset)

        // Feed.
        case let .createPost(id, author, text, activity, at, time):
            durableState.feed.insert(StoredPost(id: id, author: author, text: text, activity: activity, at: at, time: time))
        case let .setLike(post, user, liked, _):
            durableState.feed.setLike(post: post, user: user, liked: liked)
        case let .addComment(post, id, author, text, time):
            durableState.feed.addComment(FeedComment(id: id, author: author, text: text, time: time), to: post)
        case let .deletePost(post, author, _):
            durableState.feed.remove(post: post, author: author)

        // Activities.
        case let .setActivity(user, activity, audience, expiresAt, time):
            let since = durableState.activityStatuses.status(of: user, activity: activity)?.since ?? time
            durableState.activityStatuses.set(ActivityStatus(activity: activity, audience: audience, since: since, expiresAt: expiresAt), of: user)
        case let .clearActivity(user, activity, _, _):
            durableState.activityStatuses.clear(activity, of: user)
        case let .startMatch(user, partner, activity, time):
            durableState.activityMatches.start(user, partner, activity: activity, since: time)
        case let .endMatch(user, partner, activity, _, _):
            durableState.activityMatches.end(user, partner, activity: activity)

        // Places.
        case let .setPlace(user, place, _):
            durableState.places.set(place, of: user)
        case let .removePlace(user, placeID, _):
            durableState.places.remove(placeID, of: user)
        case let .updateLocation(user, location, _):
            durableState.places.setLocation(location, of: user)

        // Memories.
        case let .createMemory(owner, id, title, date, placeName, position, time):
            durableState.memories.put(StoredMemory(id: id, owner: owner, title: title, date: date, placeName: placeName, position: position, createdAt: time))
        case let .updateMemory(owner, id, title, date, placeName, position, time):
            durableState.memories.modify(id, ownedBy: owner) { memory in
                memory.title = title
                memory.date = date
                memory.placeName = placeName
                memory.position = position
                memory.updatedAt = time
            }
        case let .deleteMemory(owner, id, _):
            durableState.memories.remove(id, ownedBy: owner)
        case let .putMemoryPoint(owner, memory, point, time):
            durableState.memories.modify(memory, ownedBy: owner) { memory in
                memory.put(point)
                memory.updatedAt = time
            }
        case let .deleteMemoryPoint(owner, memory, point, time):
            durableState.memories.modify(memory, ownedBy: owner) { memory in
                memory.removePoint(point)
                memory.updatedAt = time
            }
        case let .addPhotoOwner(owner, hash, size, _):
            durableState.photos.add(owner, hash, size: size)

        // Keyed writes.
        case let .keepResult(user, op, clientID, reply, time):
            durableState.keptResults.keep(
                KeptResult(op: op, clientID: clientID, reply: reply, time: time), of: user,
                limit: configuration.keptResultsPerUser, window: configuration.keptResultMilliseconds)
        case let .forgetKeptResults(before, _):
            durableState.keptResults.forget(before: before)
        }
    }

    /// The user's friends: who may read the user's `loc:` channel and hears of their presence.
    public func friends(of user: Username) -> Set<Username> {
        durableState.friendships.friends(of: user)
    }

    /// True while the user has an authenticated connection, or is within the grace period
    /// after their last one closed.
    public func isOnline(_ user: Username) -> Bool {
        connections.hasConnections(of: user) || presence.isInGrace(user)
    }

    /// Live connections the core knows (opened, not closed).
    public var connectionCount: Int { connections.count }

    /// Applies `command` and records it for the log.
    func record(_ command: CoreCommand, into step: inout CoreStep) {
        apply(command)
        step.commands.append(command)
    }

    func insertSession(_ session: NewSession, of username: Username, at time: Int64) {
        let record = SessionRecord(
            tokenHash: session.tokenHash, username: username, expiresAt: session.expiresAt,
            device: session.device, createdAt: time
        )
        durableState.sessions.insert(record)
        schedulePurge(of: record)
    }

    private func schedulePurge(of session: SessionRecord) {
        sessionPurges.push(SessionPurge(time: purgeTime(of: session), tokenHash: session.tokenHash))
        sessionExpiries.push(SessionPurge(time: session.expiresAt, tokenHash: session.tokenHash))
    }

    func purgeTime(of session: SessionRecord) -> Int64 {
        let (time, overflow) = session.expiresAt.addingReportingOverflow(configuration.expiredSessionRetentionMilliseconds)
        return overflow ? Int64.max : time
    }

    /// The one place publications are stored, for `handle` and `apply` alike. A name from the
    /// log was validated before it was logged; `namespace` nil only guards against a corrupt one.
    /// A chat publication also moves its publisher's read marker to it.
    func appendPublication(
        to channel: String, namespace: ChannelNamespace?, from: Username?, type: String, data: String, clientID: String? = nil,
        time: Int64
    ) -> Publication {
        let limit = configuration.historyLimit(for: namespace ?? .room)
        let publication = RetainedPublication(type: type, from: from, data: data, time: time, clientID: clientID)
        let stored = durableState.channels.publish(to: channel, publication, limit: limit)
        scheduleHistoryExpiry(of: channel)
        if namespace == .chat, let from { durableState.readMarkers.advance(from, in: channel, to: stored.offset) }
        return stored
    }

    func reply(_ connection: ConnectionRef?, _ requestID: String?, _ reply: CoreReply, into step: inout CoreStep) {
        step.outputs.append(.reply(connection, requestID: requestID, reply))
    }

    func fail(_ connection: ConnectionRef?, _ requestID: String?, _ error: CoreError, into step: inout CoreStep) {
        step.outputs.append(.reply(connection, requestID: requestID, .failure(error)))
    }
}
