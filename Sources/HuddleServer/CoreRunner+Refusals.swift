import HuddleCore
import HuddleIO
import HuddleProtocol
import HuddleWebSocket

/// Requests answered without the core (over a fair share, or writes while storage refuses
/// them) and the answers of a turn the log refused.
extension CoreRunner {
    /// A request over its owner's fair share: answered `rate_limited` here, never reaching the
    /// core or the log.
    func refuse(_ request: CoreRequest, from connection: ConnectionRef, _ requestID: String, _ refusal: UsageBudgets.Refusal) {
        metrics.countError("rate_limited")
        metrics.countBudgetRefusal(refusal.budget.rawValue)
        secrets[connection]?[requestID] = nil
        let text = ServerMessage.failure(
            id: requestID, code: "rate_limited", message: refusal.message, retryAfterMilliseconds: refusal.retryAfterMilliseconds)
        // Queued behind this turn's requests, whose replies are sent at its end: replies keep
        // the order of the requests.
        turn.append(HandledRequest(request: request, step: CoreStep(), op: nil, submitted: 0, refusal: (connection, text)))
    }

    /// A write request refused up front while storage is down: answered where its answer goes.
    func refuseWrite(_ request: CoreRequest) {
        switch request.replyRoute {
        case .connection(let ref, let requestID):
            replyUnavailable(ref, requestID)
        case .api(let requestID):
            replyUnavailable(nil, requestID)
        case .photo(let caller):
            metrics.countError("unavailable")
            answerPhoto(caller, .storageUnavailable)
        case .signInEvent, .none:
            break  // the server's own writes (expiring activities) wait for the disk
        }
    }

    func replyUnavailable(_ ref: ConnectionRef?, _ requestID: String?) {
        metrics.countError("unavailable")
        let message = "storage is refusing writes; reads still work, try again later"
        if let ref {
            if let requestID { secrets[ref]?[requestID] = nil }
            sendReply(ServerMessage.failure(id: requestID, code: "unavailable", message: message), to: ref, requestID)
        } else if let requestID {
            let body = ReplyError(code: "unavailable", message: message).httpBody
            respondAPI(requestID, status: 503, body: body)
        }
    }

    /// The outputs of a request whose commands never reached the log: its replies become
    /// `unavailable`, its events are dropped, closes still happen (the core already forgot
    /// those connections), and a connection that just signed up or logged in is closed (1013):
    /// its session does not exist after the rollback.
    func routeUnlogged(_ handled: HandledRequest) {
        for output in handled.step.outputs {
            switch output {
            case .reply(let ref, let requestID, _):
                replyUnavailable(ref, requestID)
            case .deliver, .presenceChanged, .typing, .sessionAccepted, .verifyPassword, .hashNewPassword:
                break
            // Moderation and deletion: a password check logs nothing itself (the core counts its
            // hash until the answer comes); an unlogged deletion removes no file.
            case .verifyAccountDeletion:
                route(output)
            case .removePhotoFiles:
                break
            // Presence is ephemeral: a connection that came online stays so until it closes.
            case .localPresence:
                route(output)
            // Feed.
            case .feedEvent:
                break
            // Push.
            // The publication or notice it tells of was taken back: nothing to tell.
            case .pushNotification:
                break
            // Memories.
            case .memoryChanged:
                break
            // Profiles: the change was taken back.
            case .profileChanged:
                break
            // Passwords: a code whose issue was taken back is not mailed; the others carry no
            // command of their own and are never taken back.
            case .mailPasswordReset:
                break
            case .changePassword, .hashResetPassword:
                route(output)
            case .photoAccess(let caller, _):
                answerPhoto(caller, .storageUnavailable)
            case .closeConnections, .authFailed:
                route(output)
            // The report was taken back with its command.
            case .reportFiled:
                break
            }
        }
        if handled.request.continuesASignIn, let ref = handled.request.connection {
            outbox[ref.loop].append(.close(serial: ref.serial, code: WebSocketCloseCode.tryAgainLater.rawValue, reason: "storage unavailable"))
        }
    }
}
