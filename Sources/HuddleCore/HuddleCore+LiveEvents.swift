import HuddleProtocol

/// What this node's live connections hear of a durable command, beyond the publications it
/// delivers itself (`deliver`): the one place these events are built, for `handle` (which
/// calls it right where its reply is made) and for `applyReplicated` (a command another node
/// decided). Both judge the state right after the command was applied, so a command tells the
/// same events wherever it was decided.
extension HuddleCore {
    /// What a command's events need from the state before it: `priorFacts(of:)` reads them
    /// before the command is applied. Only a point's addition and its replacement look the same
    /// afterwards.
    struct PriorFacts {
        var pointExisted = false
        /// `eraseChannels`: the publications it turns into tombstones (told to their subscribers);
        /// `eraseUser`: the photos nobody else owns (removed from disk by the deciding node).
        var erasedPublications: [(channel: String, offset: UInt64)] = []
        var orphanedPhotos: [String] = []
    }

    func priorFacts(of command: CoreCommand) -> PriorFacts {
        switch command {
        case let .putMemoryPoint(_, memory, point, _):
            return PriorFacts(pointExisted: durableState.memories[memory]?.point(point.id) != nil)
        case let .eraseUser(user, _):
            return PriorFacts(orphanedPhotos: orphanedPhotos(of: user))
        case let .eraseChannels(user, channels, _):
            return PriorFacts(erasedPublications: erasedPublications(of: user, in: channels))
        default:
            return PriorFacts()
        }
    }

    /// Adds the events (and closes) owed to this node's live connections because `command`
    /// was just applied. One case per command, no `default:`, so a new command must say what
    /// its connections hear.
    func tellLive(after command: CoreCommand, prior: PriorFacts = PriorFacts(), at time: Int64, into step: inout CoreStep) {
        switch command {
        case .signUp, .openSession, .purgeExpiredSessions, .trimExpiredHistory, .markRead:
            // Nothing live: a purged session's connections were closed when it expired.
            break
        case let .revokeSessions(_, tokenHashes, _):
            close(connections.connections(usingSessions: tokenHashes), reason: Self.loggedOutReason, at: time, into: &step)
        case .publish, .publishWithClientID:
            // Delivered by whoever appended it (`deliver` with the stored publication).
            break

        // Friends.
        case .sendFriendRequest, .dropFriendRequest:
            break
        case .acceptFriendRequest:
            // Told after everything the acceptance caused (its notices, its matches), as a
            // single node always did: `tellPresenceOfNewFriends`.
            break
        case let .removeFriend(user, friend, _):
            // Reading a loc: channel needs the friendship: live subscriptions that relied on it end.
            for (reader, owner) in [(user, friend), (friend, user)] {
                for readerConnection in connections.connections(of: reader) {
                    subscriptions.remove(readerConnection, from: "loc:" + owner)
                }
            }

        // Feed.
        case let .createPost(id, author, _, _, _, _):
            guard let post = durableState.feed[id] else { break }
            tellViewers(of: author, .posted(shown(post.view(for: author))), into: &step)
        case let .setLike(id, user, liked, time):
            guard let post = durableState.feed[id] else { break }
            let event = FeedEvent.liked(post: id, author: post.author, user: user, liked: liked, likes: post.likers.count, time: time)
            tellViewers(of: post.author, event, hidingFromBlocksOf: user, into: &step)
        case let .addComment(id, commentID, author, text, time):
            guard let post = durableState.feed[id] else { break }
            let comment = FeedComment(id: commentID, author: author, text: text, time: time)
            let event = FeedEvent.commented(post: id, author: post.author, comment: shown(comment), comments: post.comments.count)
            tellViewers(of: post.author, event, hidingFromBlocksOf: author, into: &step)
        case let .deletePost(id, author, time):
            tellViewers(of: author, .deleted(post: id, author: author, time: time), into: &step)

        // Activities and places: told through the inbox and `loc:` publications logged with them.
        case .setActivity, .clearActivity, .startMatch, .endMatch, .setPlace, .removePlace, .updateLocation:
            break

        // Memories.
        case let .createMemory(owner, id, _, _, _, _, _):
            guard let memory = durableState.memories[id] else { break }
            announceMemoryChange(.created(memory.shown()), to: owner, into: &step)
        case let .updateMemory(owner, id, _, _, _, _, _):
            guard let memory = durableState.memories[id] else { break }
            announceMemoryChange(.updated(memory.shown()), to: owner, into: &step)
        case let .deleteMemory(owner, id, _):
            announceMemoryChange(.deleted(memory: id), to: owner, into: &step)
        case let .putMemoryPoint(owner, id, point, _):
            guard let memory = durableState.memories[id] else { break }
            let change = prior.pointExisted ? MemoryChange.pointUpdated(memory.shown(), point) : .pointAdded(memory.shown(), point)
            announceMemoryChange(change, to: owner, into: &step)
        case let .deleteMemoryPoint(owner, id, point, _):
            guard let memory = durableState.memories[id] else { break }
            announceMemoryChange(.pointDeleted(memory.shown(), point: point), to: owner, into: &step)
        case .addPhotoOwner, .keepResult, .forgetKeptResults:
            break
        // Identities.
        case .createIdentityAccount, .linkIdentity, .unlinkIdentity, .spendNonce:
            break
        // Profiles and sessions.
        case let .setProfile(user, _, _, time):
            tellProfile(of: user, at: time, into: &step)
        case .seeSession:
            break
        // Passwords: the revocations they cause are commands of their own.
        case .setCredentials, .issuePasswordReset, .failPasswordReset, .resetPassword:
            break
        // Blocking: what the block undid was told by the commands logged before it.
        case .block, .unblock:
            break

        // Moderation: a suspension closes the user's connections on every node.
        case let .suspend(user, _, _, _):
            closeSuspended(user, at: time, into: &step)
        case .unsuspend, .fileReport, .resolveReport:
            break

        // Moderation and deletion.
        case let .removePublication(channel, offset, time):
            tellRemoval(of: offset, in: channel, at: time, into: &step)
        case let .eraseUser(user, time):
            close(connections.connections(of: user), reason: Self.accountDeletedReason, at: time, into: &step)
        case let .eraseChannels(_, _, time):
            for (channel, offset) in prior.erasedPublications { tellRemoval(of: offset, in: channel, at: time, into: &step) }
        case .finishErasure:
            break
        case let .removeComment(id, comment, time):
            guard let post = durableState.feed[id] else { break }
            tellViewers(of: post.author, .commentRemoved(post: id, author: post.author, comment: comment, comments: post.comments.count, time: time), into: &step)
        }
    }

    static let loggedOutReason = "logged out"

    /// Closes these connections with 4001 and forgets them at once, so nothing else is sent
    /// to them; nothing when there are none.
    func close(_ closing: [ConnectionRef], reason: String, at time: Int64, into step: inout CoreStep) {
        guard !closing.isEmpty else { return }
        step.outputs.append(.closeConnections(closing, code: Self.revokedCloseCode, reason: reason))
        for connection in closing { forget(connection, at: time) }
    }

    /// Sends the event to every live connection of `author` and of `author`'s friends (the
    /// actor's own other devices included); nothing when none is online.
    /// `actor`: who liked or commented; the users blocked with them either way are not told.
    private func tellViewers(of author: Username, _ event: FeedEvent, hidingFromBlocksOf actor: Username? = nil, into step: inout CoreStep) {
        var viewers = friends(of: author)
        viewers.insert(author)
        if let actor {
            let blocks = durableState.blocks
            viewers = viewers.filter { !blocks.eitherBlocks($0, actor) }
        }
        let recipients = connections.connections(ofAnyOf: viewers)
        if !recipients.isEmpty { step.outputs.append(.feedEvent(event, to: recipients)) }
    }

    /// Tells every live connection of the owner; nothing when none is online.
    private func announceMemoryChange(_ change: MemoryChange, to owner: Username, into step: inout CoreStep) {
        let recipients = connections.connections(of: owner)
        if !recipients.isEmpty { step.outputs.append(.memoryChanged(change, to: recipients)) }
    }

    /// Presence is only told to friends: once the two are friends (and the acceptance's notices
    /// and matches are out), each side learns whether the other is online now.
    func tellPresenceOfNewFriends(_ requester: Username, _ accepter: Username, into step: inout CoreStep) {
        for (user, friend) in [(requester, accepter), (accepter, requester)] where isOnline(user) {
            let recipients = connections.connections(of: friend)
            if !recipients.isEmpty { step.outputs.append(.presenceChanged(user: user, online: true, to: recipients)) }
        }
    }
}
