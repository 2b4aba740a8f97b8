import HuddleCore
import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// Where the core's outputs go: replies and sign-in events to their connection, events framed
/// once for all their recipients, HTTP and photo answers to the request waiting for them. Every
/// answer to a request goes through `sendReply`, `respondAPI` or `answerPhoto` (or a sign-in
/// event), which the debug build's `ReplyAudit` counts.
extension CoreRunner {
    /// Sends or hands off one output; returns the size of the reply it made to a connection
    /// (0 for anything else).
    @discardableResult
    func route(_ output: CoreOutput) -> Int {
        switch output {
        case .reply(let ref, let requestID, let reply):
            if let ref {
                var token: String?
                // Almost always empty (secrets live only while a sign-in is decided): no hashing then.
                if let requestID, !secrets.isEmpty {
                    token = secrets[ref]?[requestID]?.token
                    secrets[ref]?[requestID] = nil
                }
                if case .failure(let error) = reply {
                    metrics.countError(error.code.rawValue)
                    logIfIdentityRefusal(error, on: ref)
                }
                let text = ReplyEncoding.message(reply, id: requestID, token: token)
                sendReply(text, to: ref, requestID)
                return text.count
            } else if let requestID {
                let (status, body) = ReplyEncoding.httpResponse(reply)
                respondAPI(requestID, status: status, body: body)
            }
        case .deliver(let publication, let recipients) where publication.removed:
            let text = ServerMessage.publicationRemovedEvent(
                channel: publication.channel, epoch: publication.epoch, offset: publication.offset, time: publication.time)
            fanOut(text, to: recipients)
        case .deliver(let publication, let recipients):
            let text = ServerMessage.publicationEvent(
                channel: publication.channel, epoch: publication.epoch, offset: publication.offset, type: publication.type,
                from: publication.from, data: publication.data, time: publication.time, clientID: publication.clientID)
            fanOut(text, to: recipients)
        case .typing(let channel, let user, let recipients):
            fanOut(ServerMessage.typingEvent(channel: channel, user: user, time: WallClock.milliseconds()), to: recipients)
        case .presenceChanged(let user, let online, let recipients):
            fanOut(ServerMessage.presenceEvent(user: user, online: online, time: WallClock.milliseconds()), to: recipients)
        case .localPresence(let user, let online):
            // Made only in cluster mode (`CoreConfiguration.tellsLocalPresence`): for the other
            // nodes, through Redis.
            presenceRegistry?.setLocal(user, online: online)
        case .verifyPassword(let ref, let requestID, let username, let credentials, let password, let address):
            verifyPassword(ref, requestID, username, credentials, password, address)
        case .hashNewPassword(let ref, let requestID, let username, let email, let password, let address):
            hashNewPassword(ref, requestID, username: username, email: email, password: password, address: address)
        case .closeConnections(let refs, let code, let reason):
            for ref in refs { outbox[ref.loop].append(.close(serial: ref.serial, code: code, reason: reason)) }
        case .sessionAccepted(let ref, let user, let expiresAt):
            let text = ServerMessage.sessionEvent(username: user.username, email: user.email, expiresAt: expiresAt, time: WallClock.milliseconds())
            audit(answered: .signInEvent(ref))
            outbox[ref.loop].append(.send(serial: ref.serial, text: text, kind: .signInOutcome(accepted: true)))
        case .authFailed(let ref, let error):
            metrics.countError(error.code.rawValue)
            let text = ServerMessage.authFailedEvent(code: error.code.rawValue, message: error.message, time: WallClock.milliseconds())
            audit(answered: .signInEvent(ref))
            outbox[ref.loop].append(.send(serial: ref.serial, text: text, kind: .signInOutcome(accepted: false)))
            outbox[ref.loop].append(.close(serial: ref.serial, code: 4001, reason: error.code.rawValue))
        // Feed.
        case .feedEvent(let event, let recipients):
            fanOut(ServerEvent.feed(event).message, to: recipients)
        // Push.
        case .pushNotification(let notification):
            pushes.append(notification)  // with the outbox: after the turn is durable
        // Memories.
        case .memoryChanged(let change, let recipients):
            fanOut(ServerEvent.memoryChanged(change, time: WallClock.milliseconds()).message, to: recipients)
        case .photoAccess(let caller, let access):
            if case .refused(let error) = access { metrics.countError(error.code.rawValue) }
            answerPhoto(caller, .decided(access))
        // Profiles.
        case .profileChanged(let user, let profile, let time, let recipients):
            fanOut(ServerEvent.profile(user: user, profile, time: time).message, to: recipients)
        // Passwords.
        case .changePassword(let ref, let requestID, let username, let credentials, let oldPassword, let newPassword, let revokeOthers, let address):
            changePassword(ref, requestID, username, credentials, oldPassword: oldPassword, newPassword: newPassword, revokeOthers: revokeOthers, address: address)
        case .mailPasswordReset(let ref, let requestID, let username, let email, let expiresAt):
            // Before the request's reply, which clears its secrets.
            if let code = secrets[ref]?[requestID]?.resetCode {
                passwordResetMailer?.submit(username: username, email: email, code: code, expiresAt: expiresAt)
            }
        case .hashResetPassword(let ref, let requestID, let username, let codeHash, let newPassword, let address):
            hashResetPassword(ref, requestID, username, codeHash: codeHash, newPassword: newPassword, address: address)
        case .reportFiled(let report):
            reportGateway?.submit(report: report)
        // Moderation and deletion.
        case .verifyAccountDeletion(let ref, let requestID, let username, let credentials, let password, let address):
            verifyAccountDeletion(ref, requestID, username, credentials, password, address)
        case .removePhotoFiles(let hashes):
            removePhotoFiles(hashes)
        }
        return 0
    }

    /// Frames an event once (and compresses it once, if anyone takes compressed frames), then
    /// gives each loop the same bytes with the list of its recipients.
    func fanOut(_ text: [UInt8], to recipients: [ConnectionRef]) {
        guard !recipients.isEmpty else { return }
        let compress = deflateConnections.load(ordering: .relaxed) > 0
        let frame = SharedFrame(opcode: .text, payload: text, deflater: compress ? deflater : nil)
        var start = 0
        while start < recipients.count {
            let loopIndex = recipients[start].loop
            var end = start
            while end < recipients.count, recipients[end].loop == loopIndex { end += 1 }
            outbox[loopIndex].append(.fanOut(serials: recipients[start..<end].map(\.serial), frame: frame))
            start = end
        }
    }

    func sendReply(_ text: [UInt8], to ref: ConnectionRef, _ requestID: String?) {
        if let requestID { audit(answered: .connection(ref, requestID: requestID)) }
        outbox[ref.loop].append(.send(serial: ref.serial, text: text, kind: .reply(requestID: requestID)))
    }

    func respondAPI(_ requestID: String, status: Int, body: [UInt8]) {
        guard let connection = apiRequests.removeValue(forKey: requestID) else { return }
        audit(answered: .api(requestID: requestID))
        outbox[connection.loop].append(.httpResponse(serial: connection.serial, status: status, body: body))
    }

    /// Debug builds stop at a second answer to one request (`ReplyAudit`).
    private func audit(answered route: ReplyRoute) {
        let waited = replyAudit.answered(route)
        assert(waited, "an answer to no waiting request: \(route)")
    }

    func answerPhoto(_ caller: ConnectionRef, _ outcome: PhotoAccessOutcome) {
        audit(answered: .photo(caller: caller))
        outbox[caller.loop].append(.photoAccess(serial: caller.serial, outcome))
    }
}

extension CoreOutput {
    /// A retried write answered with its first result.
    var isDuplicateReply: Bool {
        switch self {
        case .reply(_, _, .duplicate), .reply(_, _, .alreadyPublished): return true
        default: return false
        }
    }
}
