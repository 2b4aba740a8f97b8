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
    /// Cluster mode: who other nodes say is online there.
    var remotePresence = RemotePresence()
    var loginThrottle: LoginThrottle
    var friendRequestThrottle: FriendRequestThrottle
    var roomQuota: RoomQuota
    /// Each reporter's budget of reports over time (ephemeral, like the friend-request one).
    var reportBudgets: [Username: TokenBucket] = [:]
    /// When each user last began an export archive (`exportArchive`); ephemeral, like the throttles.
    var exportStarts: [Username: Int64] = [:]
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
    /// Derived from the durable profiles, for `user_search`.
    var displayNames: DisplayNameIndex
    /// Sessions this node saw sign in or disconnect since `recordSessionsSeen` last logged them.
    var sessionsSeen = SessionsSeen()
    var nextSessionsSeenSweep: Int64 = .min
    var passwordResetThrottle = PasswordResetThrottle()
    /// When `tick` next forgets expired kept results (the first tick after a start does).
    var nextKeptResultSweep: Int64 = .min
    /// Where this node, deciding the chunks of pending erasures, is in each one's channels.
    var erasureScans: [Username: ErasureScan] = [:]

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
        displayNames = DisplayNameIndex(state.profiles)
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
        displayNames = DisplayNameIndex(state.profiles)
        for session in state.sessions.byTokenHash.values { schedulePurge(of: session) }
        historyExpiries = HistoryExpiries()
        scheduleEveryHistoryExpiry()
        erasureScans = [:]
    }

    /// Applies a durable change: the replay path, and what `handle` does with the commands it
    /// makes. Commands are trusted (`handle` validated them before logging). Returns the stored
    /// publication of a `publish`, for a caller that delivers it (`applyReplicated`).
    @discardableResult
    public func apply(_ command: CoreCommand) -> Publication? {
        var stored: Publication?
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
            stored = appendPublication(to: channel, namespace: ChannelNamespace(prefixOf: channel), from: from, type: type, data: data, time: time)
        case let .sendFriendRequest(from, to, message, time):
            durableState.friendships.insert(FriendRequest(from: from, to: to, message: message, time: time))
        case let .acceptFriendRequest(from, to, _):
            durableState.friendships.befriend(from, to)
        case let .dropFriendRequest(from, to, _):
            durableState.friendships.removeRequest(from: from, to: to)
        case let .removeFriend(user, friend, _):
            durableState.friendships.unfriend(user, friend)
        case let .publishWithClientID(channel, from, type, data, clientID, time):
            stored = appendPublication(
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

        // Identities.
        case let .createIdentityAccount(username, email, identity, time):
            // `handle` made sure the name was free; an account already there is never replaced.
            guard durableState.accounts[username] == nil else { break }
            durableState.accounts.insert(UserRecord(username: username, email: email, credentials: nil, createdAt: time))
            usernames.insert(username)
            durableState.identities.link(identity, to: username)
        case let .linkIdentity(username, identity, _):
            durableState.identities.link(identity, to: username)
        case let .unlinkIdentity(username, issuer, subject, _):
            durableState.identities.unlink(IdentityKey(issuer: issuer, subject: subject), of: username)
        case let .spendNonce(issuer, subject, nonce, expiresAt, time):
            durableState.identities.spend(
                nonce: nonce, issuer: issuer, subject: subject, until: expiresAt, at: time, bound: configuration.maxSpentNonces,
                perIdentity: configuration.maxSpentNoncesPerIdentity)
        // Profiles and sessions.
        case let .setProfile(user, displayName, avatar, _):
            displayNames.replace(durableState.profiles[user].displayName, with: displayName, of: user)
            durableState.profiles.set(UserProfile(displayName: displayName, avatar: avatar), of: user)
        case let .seeSession(username, tokenHash, time):
            durableState.sessions.see(tokenHash, ownedBy: username, at: time)

        // Passwords.
        case let .setCredentials(username, credentials, _):
            durableState.accounts.setCredentials(credentials, of: username)
        case let .issuePasswordReset(username, codeHash, expiresAt, _):
            durableState.passwordResets.issue(codeHash, expiresAt: expiresAt, to: username)
        case let .failPasswordReset(username, _):
            durableState.passwordResets.fail(username, limit: Self.resetAttemptsPerCode)
        case let .resetPassword(username, credentials, _):
            durableState.accounts.setCredentials(credentials, of: username)
            durableState.passwordResets.remove(username)
        // Blocking.
        case let .block(user, blocked, _):
            durableState.blocks.block(user, blocked)
        case let .unblock(user, blocked, _):
            durableState.blocks.unblock(user, blocked)

        // Moderation.
        case let .suspend(user, reason, until, time):
            durableState.suspensions.suspend(user, Suspension(reason: reason, until: until, time: time))
        case let .unsuspend(user, _):
            durableState.suspensions.lift(user)
        case let .fileReport(report):
            durableState.reports.file(report)
        case let .resolveReport(id, action, note, time):
            durableState.reports.resolve(id, ReportResolution(action: action, note: note, time: time))
            // About a deleted account: the case is closed, nothing of it is kept.
            if let user = durableState.reports[id]?.user, durableState.accounts[user] == nil { durableState.reports.forgetResolved(id) }
        // Moderation and deletion.
        case let .removePublication(channel, offset, _):
            durableState.channels.remove(channel, at: offset)
        case let .eraseUser(username, time):
            eraseUser(username, at: time)
        case let .eraseChannels(username, channels, _):
            eraseChannels(channels, of: username)
        case let .finishErasure(username, _):
            durableState.erasures.finish(username)
            erasureScans[username] = nil
        case let .removeComment(post, comment, _):
            durableState.feed.removeComment(comment, from: post)
        }
        return stored
    }

    /// The user's friends: who may read the user's `loc:` channel and hears of their presence.
    public func friends(of user: Username) -> Set<Username> {
        durableState.friendships.friends(of: user)
    }

    /// True while the user has an authenticated connection, or is within the grace period
    /// after their last one closed — on this node or, in cluster mode, on another.
    public func isOnline(_ user: Username) -> Bool {
        isOnlineHere(user) || remotePresence.isOnline(user)
    }

    func isOnlineHere(_ user: Username) -> Bool {
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
        let (stored, oldestExpiry) = durableState.channels.publish(to: channel, publication, limit: limit)
        if let oldestExpiry { historyExpiries.schedule(channel, at: oldestExpiry) }
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
