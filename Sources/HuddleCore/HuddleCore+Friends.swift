import HuddleProtocol

/// Friends: user search, requests with a message, accept, decline, cancel, remove, and the
/// friends list with presence (protocol.md, "Friends").
///
/// Every change is told to both sides through their inboxes (`inbox:USER`, `from: null`), so a
/// user who was offline finds it there, and each of their devices learns what another did.
extension HuddleCore {
    static let maxSearchResults = 50

    func searchUsers(_ connection: ConnectionRef, requestID: String, prefix: String, limit: Int, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        // Usernames are ASCII lowercase; folding the prefix the same way makes "Al" find "alice".
        let canonical = String(decoding: prefix.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
        let bound = min(max(limit, 1), Self.maxSearchResults)
        // Users blocked either way are not found, by username or display name.
        let blocks = durableState.blocks
        let me = identity.username
        var found = usernames.search(prefix: canonical, limit: bound, excluding: me) { blocks.eitherBlocks(me, $0) }
        // Then those found by display name alone, as `DisplayNameIndex` orders them.
        var seen = Set(found)
        for user in displayNames.search(prefix: prefix, limit: bound, excluding: me, isHidden: { blocks.eitherBlocks(me, $0) })
        where found.count < bound && seen.insert(user).inserted {
            found.append(user)
        }
        reply(connection, requestID, .users(found, profiles: profiles(of: found)), into: &step)
    }

    func sendFriendRequest(
        _ connection: ConnectionRef, requestID: String, user: String, message: String, at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let other = existingUser(user, connection, requestID, into: &step)
        else { return }
        let me = identity.username
        let friendships = durableState.friendships
        guard other != me else {
            return fail(connection, requestID, CoreError(.selfRequest, "you cannot befriend yourself"), into: &step)
        }
        if let refusal = blockRefusal(me, other, named: user) {
            return fail(connection, requestID, refusal, into: &step)
        }
        guard !friendships.areFriends(me, other) else {
            return fail(connection, requestID, CoreError(.alreadyFriends, "you and \(other) are friends already"), into: &step)
        }
        guard friendships.request(from: me, to: other) == nil else {
            return fail(connection, requestID, CoreError(.alreadyRequested, "you asked \(other) already"), into: &step)
        }
        if let refusal = friendshipRefusal(me, other) {
            return fail(connection, requestID, refusal, into: &step)
        }
        if friendships.request(from: other, to: me) != nil {
            // Both asked: the second request is the first one's answer.
            befriend(requester: other, accepter: me, at: time, into: &step)
            return reply(connection, requestID, .friendRequestSent(becameFriends: true), into: &step)
        }
        if friendships.outgoingRequestCount(of: me) >= configuration.maxOutgoingFriendRequests {
            let message = "you have \(configuration.maxOutgoingFriendRequests) requests waiting already; cancel one or wait for answers"
            return fail(connection, requestID, CoreError(.tooManyRequests, message), into: &step)
        }
        if friendships.incomingRequestCount(of: other) >= configuration.maxIncomingFriendRequests {
            return fail(connection, requestID, CoreError(.tooManyRequests, "\(other) has too many requests waiting"), into: &step)
        }
        if let refusal = friendRequestThrottle.admit(from: me, to: other, at: time) {
            return fail(connection, requestID, refusal, into: &step)
        }
        record(.sendFriendRequest(from: me, to: other, message: message, time: time), into: &step)
        let notice = InboxNotice.friendRequest(from: me, to: other, message: message, profile: durableState.profiles[me])
        publishNotice(notice, to: other, at: time, into: &step)
        if friendRequestThrottle.mayPush(to: other, at: time) {
            notifyOfflineOfFriendRequest(other, from: me, message: message, at: time, into: &step)
        }
        publishNotice(notice, to: me, at: time, into: &step)
        reply(connection, requestID, .friendRequestSent(becameFriends: false), into: &step)
    }

    func listFriendRequests(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let friendships = durableState.friendships
        let incoming = friendships.incomingRequests(of: identity.username)
        let outgoing = friendships.outgoingRequests(of: identity.username)
        let profiles = profiles(of: incoming.map(\.from) + outgoing.map(\.to))
        reply(connection, requestID, .friendRequests(incoming: incoming, outgoing: outgoing, profiles: profiles), into: &step)
    }

    func answerFriendRequest(
        _ connection: ConnectionRef, requestID: String, user: String, accept: Bool, at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let requester = existingUser(user, connection, requestID, into: &step)
        else { return }
        guard durableState.friendships.request(from: requester, to: identity.username) != nil else {
            return fail(connection, requestID, CoreError(.noRequest, "\(requester) has not asked you"), into: &step)
        }
        if accept {
            if let refusal = friendshipRefusal(identity.username, requester) {
                return fail(connection, requestID, refusal, into: &step)
            }
            befriend(requester: requester, accepter: identity.username, at: time, into: &step)
        } else {
            drop(from: requester, to: identity.username, notice: InboxNotice.friendDeclined, at: time, into: &step)
        }
        reply(connection, requestID, .done, into: &step)
    }

    func cancelFriendRequest(_ connection: ConnectionRef, requestID: String, user: String, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let recipient = existingUser(user, connection, requestID, into: &step)
        else { return }
        guard durableState.friendships.request(from: identity.username, to: recipient) != nil else {
            return fail(connection, requestID, CoreError(.noRequest, "you have not asked \(recipient)"), into: &step)
        }
        drop(from: identity.username, to: recipient, notice: InboxNotice.friendCancelled, at: time, into: &step)
        friendRequestThrottle.cancelled(from: identity.username, to: recipient, at: time)
        reply(connection, requestID, .done, into: &step)
    }

    func removeFriend(_ connection: ConnectionRef, requestID: String, user: String, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let friend = existingUser(user, connection, requestID, into: &step)
        else { return }
        let me = identity.username
        guard durableState.friendships.areFriends(me, friend) else {
            return fail(connection, requestID, CoreError(.notFriends, "you and \(friend) are not friends"), into: &step)
        }
        endFriendship(me, friend, at: time, into: &step)
        reply(connection, requestID, .done, into: &step)
    }

    /// Records the end of the friendship, tells both inboxes and ends the pair's matches
    /// (`friend_remove`, and a block between friends).
    func endFriendship(_ me: Username, _ friend: Username, at time: Int64, into step: inout CoreStep) {
        let command = CoreCommand.removeFriend(user: me, friend: friend, time: time)
        record(command, into: &step)
        tellLive(after: command, at: time, into: &step)
        let notice = InboxNotice.friendRemoved(user: me, friend: friend)
        publishNotice(notice, to: friend, at: time, into: &step)
        publishNotice(notice, to: me, at: time, into: &step)
        endActivities(between: me, and: friend, at: time, into: &step)
    }

    func listFriends(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let list = friends(of: identity.username).sorted().map {
            FriendStatus(username: $0, online: isOnline($0), profile: durableState.profiles[$0])
        }
        reply(connection, requestID, .friends(list), into: &step)
    }

    /// Records the friendship, tells both inboxes and starts the matches it makes, then tells
    /// each side's live connections whether the other is online (`tellPresenceOfNewFriends`).
    private func befriend(requester: Username, accepter: Username, at time: Int64, into step: inout CoreStep) {
        let command = CoreCommand.acceptFriendRequest(from: requester, to: accepter, time: time)
        record(command, into: &step)
        tellLive(after: command, at: time, into: &step)
        let notice = InboxNotice.friendAccepted(from: requester, to: accepter)
        publishNotice(notice, to: requester, at: time, into: &step)
        notifyOfflineOfAcceptance(requester, by: accepter, at: time, into: &step)
        publishNotice(notice, to: accepter, at: time, into: &step)
        startActivityMatches(between: requester, and: accepter, at: time, into: &step)
        tellPresenceOfNewFriends(requester, accepter, into: &step)
    }

    func drop(
        from sender: Username, to recipient: Username, notice: (String, String) -> InboxNotice, at time: Int64, into step: inout CoreStep
    ) {
        record(.dropFriendRequest(from: sender, to: recipient, time: time), into: &step)
        let notice = notice(sender, recipient)
        publishNotice(notice, to: recipient, at: time, into: &step)
        publishNotice(notice, to: sender, at: time, into: &step)
    }

    /// `too_many_friends` when either side is at the friends bound, else nil.
    private func friendshipRefusal(_ me: Username, _ other: Username) -> CoreError? {
        let bound = configuration.maxFriends
        if durableState.friendships.friendCount(of: me) >= bound {
            return CoreError(.tooManyFriends, "you have \(bound) friends, the most allowed; remove one first")
        }
        if durableState.friendships.friendCount(of: other) >= bound {
            return CoreError(.tooManyFriends, "\(other) has \(bound) friends, the most allowed")
        }
        return nil
    }

    /// The canonical name of an existing account, or nil having replied `user_not_found`.
    func existingUser(_ text: String, _ connection: ConnectionRef, _ requestID: String, into step: inout CoreStep) -> Username? {
        guard let username = UsernameRules.canonical(text), durableState.accounts[username] != nil else {
            fail(connection, requestID, CoreError(.userNotFound, "no user \(text)"), into: &step)
            return nil
        }
        return username
    }
}
