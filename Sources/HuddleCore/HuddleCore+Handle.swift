import HuddleProtocol

extension HuddleCore {
    /// Handles one request at `time` (milliseconds since the Unix epoch, from the server).
    public func handle(_ request: CoreRequest, at time: Int64) -> CoreStep {
        var step = CoreStep()
        let connection = request.connection
        let requestID = request.requestID
        switch request.body {
        case .operation(let operation):
            guard let requestID else { break }
            guard let connection else {
                handleAPI(operation, requestID: requestID, at: time, into: &step)
                break
            }
            if let clientID = request.clientID, operation.keepsResult {
                handleKeyed(operation, from: connection, requestID: requestID, clientID: clientID, at: time, into: &step)
            } else {
                handle(operation, from: connection, requestID: requestID, clientID: request.clientID, at: time, into: &step)
            }
        case let .beginSignUp(username, email, password, address):
            guard let connection, let requestID else { break }
            beginSignUp(connection, requestID: requestID, username: username, email: email, password: password, address: address, at: time, into: &step)
        case let .signUp(username, email, passwordLength, passwordEqualsUsername, address, credentials, session):
            passwordHashes.end(.signUp, from: address)
            guard let connection, let requestID else { break }
            signUp(
                connection, requestID: requestID, username: username, email: email, passwordLength: passwordLength,
                passwordEqualsUsername: passwordEqualsUsername, credentials: credentials, session: session,
                at: time, into: &step
            )
        case let .beginLogin(login, address, password):
            guard let connection, let requestID else { break }
            beginLogin(connection, requestID: requestID, login: login, address: address, password: password, at: time, into: &step)
        case let .finishLogin(username, passwordMatched, address, session, refusal):
            passwordHashes.end(.login, from: address)
            guard let connection, let requestID else { break }
            finishLogin(
                connection, requestID: requestID, username: username, passwordMatched: passwordMatched, session: session, refusal: refusal,
                at: time, into: &step)
        case let .authenticate(tokenHash):
            guard let connection else { break }
            authenticate(connection, requestID: requestID, tokenHash: tokenHash, at: time, into: &step)
        case let .serverPublish(channel, type, data):
            guard let requestID else { break }
            serverPublish(requestID: requestID, channel: channel, type: type, data: data, at: time, into: &step)
        case let .disconnectUser(username):
            guard let requestID else { break }
            disconnectUser(requestID: requestID, username: username, at: time, into: &step)
        case let .moderation(moderation):
            guard let requestID else { break }
            moderate(moderation, requestID: requestID, at: time, into: &step)
        case let .removeContent(content):
            guard let requestID else { break }
            removeContent(requestID: requestID, content, at: time, into: &step)
        case let .deleteUser(username):
            guard let requestID else { break }
            deleteUser(requestID: requestID, username: username, at: time, into: &step)
        case let .finishAccountDeletion(username, passwordMatched, address):
            guard let connection, let requestID else { break }
            finishAccountDeletion(connection, requestID: requestID, username: username, passwordMatched: passwordMatched, address: address, at: time, into: &step)
        case let .authorizePhotoUpload(caller, tokenHash, size):
            authorizePhotoUpload(caller, tokenHash: tokenHash, size: size, at: time, into: &step)
        case let .recordPhoto(caller, tokenHash, hash, size):
            recordPhoto(caller, tokenHash: tokenHash, hash: hash, size: size, at: time, into: &step)
        case let .authorizePhotoRead(caller, tokenHash, hash):
            authorizePhotoRead(caller, tokenHash: tokenHash, hash: hash, at: time, into: &step)
        case let .exportArchive(caller, tokenHash):
            exportArchive(caller, tokenHash: tokenHash, at: time, into: &step)
        case let .connectionOpened(address):
            guard let connection else { break }
            _ = connections.open(connection, address: address)
        case .connectionClosed:
            guard let connection else { break }
            forget(connection, at: time)
        case .tick:
            tick(at: time, into: &step)
        case .expireActivities:
            expireActivities(at: time, into: &step)
        case .continueErasure:
            continueErasure(at: time, into: &step)
        case .recordSessionsSeen:
            recordSessionsSeen(at: time, into: &step)
        // Passwords.
        case let .finishPasswordChange(username, verified, newCredentials, revokeOthers, address):
            passwordHashes.end(.login, from: address)
            guard let connection, let requestID else { break }
            finishPasswordChange(
                connection, requestID: requestID, username: username, verified: verified, newCredentials: newCredentials,
                revokeOthers: revokeOthers, address: address, at: time, into: &step)
        case let .requestPasswordReset(login, address, codeHash, expiresAt):
            guard let connection, let requestID else { break }
            requestPasswordReset(
                connection, requestID: requestID, login: login, address: address, codeHash: codeHash, expiresAt: expiresAt, at: time, into: &step)
        case let .beginPasswordReset(login, address, codeHash, newPassword):
            guard let connection, let requestID else { break }
            beginPasswordReset(
                connection, requestID: requestID, login: login, address: address, codeHash: codeHash, newPassword: newPassword, at: time,
                into: &step)
        case let .finishPasswordReset(username, codeHash, credentials, address):
            passwordHashes.end(.login, from: address)
            guard let connection, let requestID else { break }
            finishPasswordReset(connection, requestID: requestID, username: username, codeHash: codeHash, credentials: credentials, at: time, into: &step)
        case let .presenceElsewhere(user, node, online):
            presenceElsewhere(user, on: node, online: online, into: &step)
        case let .nodeGone(node):
            nodeGone(node, into: &step)
        case .localTick:
            tickLocally(at: time, into: &step)
        case let .identityVerified(proof):
            guard let connection, let requestID else { break }
            identityVerified(connection, requestID: requestID, proof, at: time, into: &step)
        }
        return step
    }

    /// The HTTP API sends one op of its own, `history`, which may read any channel.
    private func handleAPI(_ operation: Operation, requestID: String, at time: Int64, into step: inout CoreStep) {
        guard case .history(let channel, let before, let limit) = operation else {
            return fail(nil, requestID, CoreError(.badRequest, "\(operation.name) needs a connection"), into: &step)
        }
        history(nil, requestID: requestID, channel: channel, before: before, limit: limit, at: time, into: &step)
    }

    /// A client's op: one handler each. `clientID` is a publication's own (a kept write's was
    /// taken by `handleKeyed`).
    func handle(
        _ operation: Operation, from connection: ConnectionRef, requestID: String, clientID: String?, at time: Int64,
        into step: inout CoreStep
    ) {
        switch operation {
        case .ping, .signup, .login, .auth, .identitySignIn, .identityLink, .appAuth, .passwordResetRequest, .passwordReset,
             .accountDeleteWithIdentity:
            // The server answers these itself (it hashes passwords and tokens; the core never does).
            fail(connection, requestID, CoreError(.badRequest, "\(operation.name) is answered by the server"), into: &step)
        case let .logout(all):
            logout(connection, requestID: requestID, all: all, at: time, into: &step)
        case .whoami:
            whoami(connection, requestID: requestID, into: &step)
        case let .subscribe(channel, since):
            let position = since.map { ChannelPosition(epoch: $0.epoch, offset: $0.offset) }
            subscribe(connection, requestID: requestID, channel: channel, since: position, at: time, into: &step)
        case let .unsubscribe(channel):
            unsubscribe(connection, requestID: requestID, channel: channel, into: &step)
        case let .publish(channel, type, data):
            publish(connection, requestID: requestID, channel: channel, type: type, data: data, clientID: clientID, at: time, into: &step)
        case let .history(channel, before, limit):
            history(connection, requestID: requestID, channel: channel, before: before, limit: limit, at: time, into: &step)
        case let .presence(channel):
            roomPresence(connection, requestID: requestID, channel: channel, into: &step)
        case let .userSearch(prefix, limit):
            searchUsers(connection, requestID: requestID, prefix: prefix, limit: limit, into: &step)
        case let .friendRequest(user, message):
            sendFriendRequest(connection, requestID: requestID, user: user, message: message, at: time, into: &step)
        case .friendRequests:
            listFriendRequests(connection, requestID: requestID, into: &step)
        case let .friendAccept(user):
            answerFriendRequest(connection, requestID: requestID, user: user, accept: true, at: time, into: &step)
        case let .friendDecline(user):
            answerFriendRequest(connection, requestID: requestID, user: user, accept: false, at: time, into: &step)
        case let .friendCancel(user):
            cancelFriendRequest(connection, requestID: requestID, user: user, at: time, into: &step)
        case let .friendRemove(user):
            removeFriend(connection, requestID: requestID, user: user, at: time, into: &step)
        case .friends:
            listFriends(connection, requestID: requestID, into: &step)
        case let .markRead(channel, offset):
            markRead(connection, requestID: requestID, channel: channel, offset: offset, at: time, into: &step)
        case .unread:
            unreadCounts(connection, requestID: requestID, into: &step)
        case let .typing(channel):
            typing(connection, requestID: requestID, channel: channel, into: &step)
        // Feed.
        case let .post(text, activity, at):
            createPost(connection, requestID: requestID, text: text, activity: activity, plannedAt: at, at: time, into: &step)
        case let .feed(before, limit):
            listFeed(connection, requestID: requestID, before: before, limit: limit, into: &step)
        case let .like(post, liked):
            likePost(connection, requestID: requestID, post: post, liked: liked, at: time, into: &step)
        case let .comment(post, text):
            commentOnPost(connection, requestID: requestID, post: post, text: text, at: time, into: &step)
        case let .comments(post, before, limit):
            listComments(connection, requestID: requestID, post: post, before: before, limit: limit, into: &step)
        case let .postDelete(post):
            deletePost(connection, requestID: requestID, post: post, at: time, into: &step)
        // Activities.
        case .activities:
            listActivities(connection, requestID: requestID, at: time, into: &step)
        case let .activityOn(activity, friends, expiresIn):
            activityOn(connection, requestID: requestID, activity: activity, friends: friends, expiresInSeconds: expiresIn, at: time, into: &step)
        case let .activityOff(activity):
            activityOff(connection, requestID: requestID, activity: activity, at: time, into: &step)
        case let .matches(byActivity):
            listMatches(connection, requestID: requestID, byActivity: byActivity, at: time, into: &step)
        // Places.
        case let .placeSet(id, label, latitude, longitude, radius):
            setPlace(connection, requestID: requestID, id: id, label: label, latitude: latitude, longitude: longitude, radius: radius, at: time, into: &step)
        case let .placeRemove(id):
            removePlace(connection, requestID: requestID, id: id, at: time, into: &step)
        case let .places(user):
            listPlaces(connection, requestID: requestID, user: user, into: &step)
        case let .locationFix(latitude, longitude, accuracy, reported):
            let fix = LocationFix(latitude: latitude, longitude: longitude, accuracy: accuracy, time: reported)
            reportLocation(connection, requestID: requestID, fix: fix, at: time, into: &step)
        case let .region(placeID, entered, reported):
            reportRegion(connection, requestID: requestID, placeID: placeID, entered: entered, reported: reported, at: time, into: &step)
        case let .whereIs(user):
            locate(connection, requestID: requestID, user: user, into: &step)
        // Memories.
        case let .memoryCreate(arguments):
            createMemory(connection, requestID: requestID, MemoryFields(arguments), at: time, into: &step)
        case let .memoryUpdate(memory, arguments):
            updateMemory(connection, requestID: requestID, memory: memory, MemoryFields(arguments), at: time, into: &step)
        case let .memoryDelete(memory):
            deleteMemory(connection, requestID: requestID, memory: memory, at: time, into: &step)
        case .memories:
            listMemories(connection, requestID: requestID, into: &step)
        case let .memory(memory):
            readMemory(connection, requestID: requestID, memory: memory, into: &step)
        case let .pointAdd(memory, arguments):
            addMemoryPoint(connection, requestID: requestID, memory: memory, MemoryPointFields(arguments), at: time, into: &step)
        case let .pointUpdate(memory, point, arguments):
            updateMemoryPoint(connection, requestID: requestID, memory: memory, point: point, MemoryPointFields(arguments), at: time, into: &step)
        case let .pointDelete(memory, point):
            deleteMemoryPoint(connection, requestID: requestID, memory: memory, point: point, at: time, into: &step)
        // Identities.
        case let .identityUnlink(issuer, subject):
            unlinkIdentity(connection, requestID: requestID, issuer: issuer, subject: subject, at: time, into: &step)
        case .identities:
            listIdentities(connection, requestID: requestID, into: &step)
        // Profiles and sessions.
        case .profile:
            readProfile(connection, requestID: requestID, into: &step)
        case let .profileSet(displayName, avatar):
            setProfile(connection, requestID: requestID, displayName: displayName, avatar: avatar, at: time, into: &step)
        case .sessions:
            listSessions(connection, requestID: requestID, into: &step)
        case let .sessionRevoke(id):
            revokeSession(connection, requestID: requestID, id: id, at: time, into: &step)
        case let .passwordChange(oldPassword, newPassword, revokeOthers):
            beginPasswordChange(
                connection, requestID: requestID, oldPassword: oldPassword, newPassword: newPassword, revokeOthers: revokeOthers, at: time,
                into: &step)
        // Blocking.
        case let .block(user):
            block(connection, requestID: requestID, user: user, at: time, into: &step)
        case let .unblock(user):
            unblock(connection, requestID: requestID, user: user, at: time, into: &step)
        case .blocks:
            listBlocks(connection, requestID: requestID, into: &step)
        // Reports.
        case let .report(target, reason, text):
            fileReport(connection, requestID: requestID, target: target, reason: reason, text: text, at: time, into: &step)
        // Moderation and deletion.
        case let .accountDelete(password):
            beginAccountDeletion(connection, requestID: requestID, proof: .password(password), at: time, into: &step)
        case .accountExport:
            exportAccount(connection, requestID: requestID, into: &step)
        }
    }
}

extension Operation {
    /// A keyed write whose first result the core keeps for retries; a publication keeps its
    /// `client_id` with itself instead (readers see it).
    var keepsResult: Bool {
        if case .publish = self { return false }
        return isKeyedWrite
    }
}
