import HuddleProtocol

/// What handling a request does, as far as the server must know before the core runs it:
/// writes are refused up front while storage refuses writes; reads that return pages are
/// metered by the read-back budget. One exhaustive switch per kind of request, no `default:`,
/// so a new op cannot be left out (docs/ARCHITECTURE.md, "Requests").
public enum RequestEffect: Sendable, Equatable {
    /// Changes nothing durable.
    case read
    /// A read whose reply can hold many publications, posts or memories.
    case pagedRead
    /// Leads to a durable command: directly, or for a login or signup through the request that
    /// carries its hash.
    case write
}

extension Operation {
    public var effect: RequestEffect {
        switch self {
        case .ping, .auth, .whoami, .unsubscribe, .presence, .userSearch, .friendRequests, .friends, .unread, .typing:
            .read
        case .signup, .login, .logout, .publish,
             .friendRequest, .friendAccept, .friendDecline, .friendCancel, .friendRemove, .markRead:
            .write
        case .subscribe, .history:
            .pagedRead
        // Feed.
        case .post, .like, .comment, .postDelete:
            .write
        case .feed, .comments:
            .pagedRead
        // Activities.
        case .activities, .matches:
            .read
        case .activityOn, .activityOff:
            .write
        // Places.
        case .placeSet, .placeRemove, .locationFix, .region:
            .write
        case .places, .whereIs:
            .read
        // Memories.
        case .memoryCreate, .memoryUpdate, .memoryDelete, .pointAdd, .pointUpdate, .pointDelete:
            .write
        case .memories, .memory:
            .pagedRead
        // Identities.
        case .identitySignIn, .identityLink, .identityUnlink, .appAuth:
            .write
        case .identities:
            .read
        // Profiles and sessions.
        case .profile, .sessions:
            .read
        case .profileSet, .sessionRevoke, .passwordChange, .passwordResetRequest, .passwordReset:
            .write
        // Blocking.
        case .block, .unblock:
            .write
        case .blocks:
            .read
        // Reports.
        case .report:
            .write
        // Moderation and deletion.
        case .accountDelete, .accountDeleteWithIdentity:
            .write
        case .accountExport:
            .pagedRead
        }
    }
}

extension CoreRequestBody {
    public var effect: RequestEffect {
        switch self {
        case .operation(let operation):
            operation.effect
        case .beginSignUp, .beginLogin, .serverPublish, .removeContent, .deleteUser:
            .write
        // Ends a password hash the core counts, like a login's second half.
        case .finishAccountDeletion:
            .read
        // The second halves are not refused: they end password hashes the core counts.
        case .signUp, .finishLogin, .authenticate, .disconnectUser:
            .read
        case .moderation(let request):
            request.effect
        // A photo upload is refused before its body is read, not after it was stored.
        case .authorizePhotoUpload, .recordPhoto:
            .write
        case .authorizePhotoRead, .connectionOpened, .connectionClosed, .tick:
            .read
        // The export's JSON part is built from the state; nothing is written.
        case .exportArchive:
            .read
        case .expireActivities, .recordSessionsSeen, .continueErasure:
            .write
        // Passwords: as for sign-ins, the second halves end hashes the core counts.
        case .requestPasswordReset, .beginPasswordReset:
            .write
        case .finishPasswordChange, .finishPasswordReset:
            .read
        case .presenceElsewhere, .nodeGone, .localTick:
            .read
        case .identityVerified:
            .write
        }
    }
}

/// Where a request's one answer goes: what the server checks (every request gets exactly one)
/// and how it answers a request it refuses without the core.
public enum ReplyRoute: Sendable, Hashable {
    /// A reply with the request's id on a client connection.
    case connection(ConnectionRef, requestID: String)
    /// An HTTP API response (the server keys its waiting callers by `requestID`).
    case api(requestID: String)
    /// A photo request's decision (`CoreOutput.photoAccess`).
    case photo(caller: ConnectionRef)
    /// An upgrade token: a sign-in event, not a reply.
    case signInEvent(ConnectionRef)
    /// Nothing: the server's own requests.
    case none
}

extension CoreRequest {
    public var effect: RequestEffect { body.effect }

    public var replyRoute: ReplyRoute {
        switch body {
        case .operation, .beginSignUp, .signUp, .beginLogin, .finishLogin, .authenticate, .serverPublish, .disconnectUser, .identityVerified,
             .finishPasswordChange, .requestPasswordReset, .beginPasswordReset, .finishPasswordReset, .moderation, .removeContent,
             .deleteUser, .finishAccountDeletion:
            switch (connection, requestID) {
            case (let ref?, let id?): .connection(ref, requestID: id)
            case (nil, let id?): .api(requestID: id)
            case (let ref?, nil): .signInEvent(ref)
            case (nil, nil): .none
            }
        case .authorizePhotoUpload(let caller, _, _), .recordPhoto(let caller, _, _, _), .authorizePhotoRead(let caller, _, _),
             .exportArchive(let caller, _):
            .photo(caller: caller)
        case .connectionOpened, .connectionClosed, .tick, .expireActivities, .recordSessionsSeen, .presenceElsewhere, .nodeGone, .localTick,
             .continueErasure:
            .none
        }
    }

    /// The connection a client's request came on and the id its reply carries: whose budget it
    /// spends. nil for what the server itself asks (the second half of a login, connection
    /// lifecycle, ticks), for the token of an upgrade (answered by a sign-in event, not a
    /// reply), and for HTTP API and photo requests, which have no connection the core knows.
    public var sender: (connection: ConnectionRef, requestID: String)? {
        switch body {
        case .operation, .beginSignUp, .beginLogin, .authenticate, .identityVerified, .requestPasswordReset, .beginPasswordReset:
            guard let connection, let requestID else { return nil }
            return (connection, requestID)
        case .signUp, .finishLogin, .serverPublish, .disconnectUser, .authorizePhotoUpload, .recordPhoto, .authorizePhotoRead, .exportArchive,
             .connectionOpened, .connectionClosed, .tick, .expireActivities, .recordSessionsSeen, .presenceElsewhere, .nodeGone, .localTick,
             .finishPasswordChange, .finishPasswordReset, .moderation, .removeContent, .deleteUser, .finishAccountDeletion, .continueErasure:
            return nil
        }
    }

    /// Sign-ins (`login`, `auth`) are counted in a lane of their own (`BudgetOwner.signIn`).
    public var isSignIn: Bool {
        switch body {
        case .beginLogin, .authenticate: true
        case .identityVerified(let proof): proof.purpose.opensASession
        case .operation, .beginSignUp, .signUp, .finishLogin, .serverPublish, .disconnectUser, .authorizePhotoUpload,
             .recordPhoto, .authorizePhotoRead, .exportArchive, .connectionOpened, .connectionClosed, .tick, .expireActivities, .recordSessionsSeen,
             .presenceElsewhere, .nodeGone, .localTick, .finishPasswordChange, .requestPasswordReset, .beginPasswordReset, .finishPasswordReset,
             .moderation, .removeContent, .deleteUser, .finishAccountDeletion, .continueErasure:
            false
        }
    }
}
