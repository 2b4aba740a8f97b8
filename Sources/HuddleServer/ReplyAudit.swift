import HuddleCore

/// Debug builds check on the core thread that every request gets exactly one answer (a reply,
/// an HTTP response, a photo decision, or for an upgrade token a sign-in event): a request left
/// unanswered stalls every later reply of its connection (the endpoint keeps them in order),
/// and a second answer would be taken for the next request's. Counted per `ReplyRoute` — the
/// connection and request id — since a client may reuse ids. Release builds keep nothing.
struct ReplyAudit {
    #if DEBUG
    private var waiting: [ReplyRoute: Int] = [:]
    #endif

    /// A request arrives; the second half of a sign-in continues its first half's wait.
    mutating func expect(_ request: CoreRequest) {
        #if DEBUG
        let route = request.replyRoute
        guard route != .none, !request.continuesAnEarlierRequest else { return }
        waiting[route, default: 0] += 1
        #endif
    }

    /// An answer goes out; false if no request was waiting for it (a second answer).
    @discardableResult
    mutating func answered(_ route: ReplyRoute) -> Bool {
        #if DEBUG
        guard let count = waiting[route] else { return false }
        waiting[route] = count > 1 ? count - 1 : nil
        #endif
        return true
    }

    /// A connection closed: requests still waiting on it (a sign-in's password being hashed)
    /// will never be answered, and need not be.
    mutating func forget(_ connection: ConnectionRef) {
        #if DEBUG
        waiting = waiting.filter { route, _ in
            switch route {
            case .connection(let ref, _), .signInEvent(let ref): ref != connection
            case .api, .photo, .none: true
            }
        }
        #endif
    }

    /// At the end of the turn that handled `request`, once its outputs are routed: it was
    /// answered unless its answer is deferred (a password being hashed) or the core no longer
    /// knows its connection (closed meanwhile: nobody is left to answer).
    /// Returns false if it was not.
    @discardableResult
    mutating func checkAnswered(_ request: CoreRequest, _ step: CoreStep, connectionKnown: Bool) -> Bool {
        #if DEBUG
        let route = request.replyRoute
        guard route != .none, !request.continuesAnEarlierRequest, let count = waiting[route] else { return true }
        let deferred = step.outputs.contains { output in
            if case .hashNewPassword = output { return true }
            if case .verifyPassword = output { return true }
            if case .changePassword = output { return true }
            if case .hashResetPassword = output { return true }
            if case .verifyAccountDeletion = output { return true }
            return false
        }
        if deferred { return true }
        if !connectionKnown {
            waiting[route] = count > 1 ? count - 1 : nil
            return true
        }
        return false
        #else
        return true
        #endif
    }
}

extension CoreRequest {
    /// The second half of a signup or login: answered in its first half's place.
    var continuesASignIn: Bool {
        switch body {
        case .signUp, .finishLogin: true
        case .operation, .beginSignUp, .beginLogin, .authenticate, .serverPublish, .disconnectUser, .authorizePhotoUpload,
             .recordPhoto, .authorizePhotoRead, .exportArchive, .connectionOpened, .connectionClosed, .tick, .expireActivities, .recordSessionsSeen,
             .finishPasswordChange, .requestPasswordReset, .beginPasswordReset, .finishPasswordReset,
             .presenceElsewhere, .nodeGone, .localTick, .identityVerified, .moderation, .removeContent, .deleteUser, .finishAccountDeletion,
             .continueErasure:
            false
        }
    }
}

extension CoreRequest {
    /// The second half of a request whose slow work (a password's hash or check) ran on a
    /// worker: answered in its first half's place (a sign-in's, a password change's or reset's,
    /// or `account_delete`'s).
    var continuesAnEarlierRequest: Bool {
        switch body {
        case .finishPasswordChange, .finishPasswordReset, .finishAccountDeletion: true
        default: continuesASignIn
        }
    }
}
