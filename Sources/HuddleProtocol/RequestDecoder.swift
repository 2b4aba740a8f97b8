/// Decodes one client request (a text message's bytes) into a `ClientRequest`, or the error
/// reply's contents (protocol.md, "Request" and "General errors").
///
/// Checks, in order: the bytes are JSON within `limits.maxDepth` (`bad_json`, `too_deep`), the
/// top level is an object (`bad_json`), `id` is a string of 1...`maxIDLength` characters, `op`
/// is a string (`bad_request`) naming an op (`unknown_op`), then the op's arguments
/// (`bad_request`, and `payload_too_large` for publish's `data`). Unknown fields are ignored.
/// Every error after the id check carries the id.
public enum RequestDecoder {
    public static func decode(_ bytes: UnsafeRawBufferPointer, limits: ProtocolLimits) -> Result<ClientRequest, RequestError> {
        // Most requests are plain publishes: read those without the general tree.
        if let publish = PublishRequestDecoder.decode(bytes, limits: limits) { return .success(publish) }
        return decodeGenerally(bytes, limits: limits)
    }

    /// Any request, and the error reply of every refused one.
    static func decodeGenerally(_ bytes: UnsafeRawBufferPointer, limits: ProtocolLimits) -> Result<ClientRequest, RequestError> {
        Result { () throws(RequestError) -> ClientRequest in
            let members = try parseObject(bytes, limits: limits, recoverID: true)
            let id = try requestID(members, limits: limits)
            let arguments = RequestArguments(members: members, id: id)
            let operation = try operation(arguments, limits: limits)
            let clientID = operation.isKeyedWrite ? try clientID(arguments, limits: limits) : nil
            return ClientRequest(id: id, operation: operation, clientID: clientID)
        }
    }

    public static func decode(_ bytes: [UInt8], limits: ProtocolLimits) -> Result<ClientRequest, RequestError> {
        bytes.withUnsafeBytes { decode($0, limits: limits) }
    }

    /// The members of the top-level object, `data` already in compact form (as `.raw`). When
    /// the document is too deep and `recoverID` is
    /// set, the error still carries the top-level `id` if a light scan can find it, so a client
    /// that sent an over-nested publication can match the refusal to its request.
    static func parseObject(
        _ bytes: UnsafeRawBufferPointer, limits: ProtocolLimits, recoverID: Bool
    ) throws(RequestError) -> [(String, JSONValue)] {
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes, maxDepth: limits.maxDepth, compactingTopLevelMember: "data")
        } catch {
            switch error {
            case .tooDeep:
                throw RequestError(
                    id: recoverID ? RequestIDRecovery.topLevelID(in: bytes, limits: limits) : nil,
                    code: RequestErrorCode.tooDeep,
                    message: "JSON nested deeper than \(limits.maxDepth) levels")
            case .syntax(let problem):
                throw RequestError(id: nil, code: RequestErrorCode.badJSON, message: "not valid JSON: \(problem)")
            }
        }
        guard case .object(let members) = root else {
            throw RequestError(id: nil, code: RequestErrorCode.badJSON, message: "the message must be a JSON object")
        }
        return members
    }

    /// Whether `id` is usable as a request id: what the reply may echo.
    static func isValidID(_ id: String, limits: ProtocolLimits) -> Bool {
        limits.maxIDLength >= 1 && RequestArguments.hasLength(id, in: 1...limits.maxIDLength)
    }

    private static func requestID(_ members: [(String, JSONValue)], limits: ProtocolLimits) throws(RequestError) -> String {
        // No id can be echoed until it is known to be valid.
        let anonymous = RequestArguments(members: members, id: nil)
        let id = try anonymous.string("id")
        guard isValidID(id, limits: limits) else {
            throw anonymous.badRequest("id must be 1 to \(limits.maxIDLength) characters")
        }
        return id
    }

    private static func operation(_ arguments: RequestArguments, limits: ProtocolLimits) throws(RequestError) -> Operation {
        let op = try arguments.string("op")
        // The names are compared in order: the most frequent op first.
        switch op {
        case "publish":
            return .publish(
                channel: try arguments.string("channel"),
                type: try arguments.publicationType(),
                data: try arguments.publicationData(maxBytes: limits.maxDataBytes))
        case "ping":
            return .ping
        case "signup":
            return .signup(
                username: try arguments.string("username"),
                email: try arguments.string("email"),
                password: try arguments.string("password"),
                device: try arguments.device())
        case "login":
            return .login(
                login: try arguments.string("login"),
                password: try arguments.string("password"),
                device: try arguments.device())
        case "auth":
            return .auth(token: try arguments.string("token"))
        case "logout":
            return .logout(all: try arguments.optionalBool("all") ?? false)
        case "whoami":
            return .whoami
        case "subscribe":
            return .subscribe(channel: try arguments.string("channel"), since: try since(arguments))
        case "unsubscribe":
            return .unsubscribe(channel: try arguments.string("channel"))
        case "history":
            return .history(
                channel: try arguments.string("channel"),
                before: try before(arguments),
                limit: try historyLimit(arguments, limits: limits))
        case "presence":
            return .presence(channel: try arguments.string("channel"))
        case "user_search":
            return .userSearch(prefix: try searchPrefix(arguments), limit: try searchLimit(arguments, limits: limits))
        case "friend_request":
            return .friendRequest(user: try arguments.string("user"), message: try friendMessage(arguments, limits: limits))
        case "friend_requests":
            return .friendRequests
        case "friend_accept":
            return .friendAccept(user: try arguments.string("user"))
        case "friend_decline":
            return .friendDecline(user: try arguments.string("user"))
        case "friend_cancel":
            return .friendCancel(user: try arguments.string("user"))
        case "friend_remove":
            return .friendRemove(user: try arguments.string("user"))
        case "friends":
            return .friends
        case "mark_read":
            guard let offset = arguments.value("offset")?.uint64Value else {
                throw arguments.badRequest(arguments.value("offset") == nil ? "offset is required" : "offset must be a non-negative integer")
            }
            return .markRead(channel: try arguments.string("channel"), offset: offset)
        case "unread":
            return .unread
        case "typing":
            return .typing(channel: try arguments.string("channel"))
        // Feed.
        case "post":
            return try feedPost(arguments, limits: limits)
        case "feed":
            return .feed(before: try feedCursor(arguments), limit: try feedLimit(arguments, limits: limits))
        case "like":
            return .like(post: try postID(arguments), liked: try arguments.optionalBool("liked"))
        case "comment":
            return .comment(post: try postID(arguments), text: try feedText(arguments, maxLength: limits.maxCommentLength))
        case "comments":
            return .comments(post: try postID(arguments), before: try feedCursor(arguments), limit: try feedLimit(arguments, limits: limits))
        case "post_delete":
            return .postDelete(post: try postID(arguments))
        // Activities.
        case "activities":
            return .activities
        case "activity_on":
            return .activityOn(
                activity: try activityName(arguments), friends: try activityAudience(arguments), expiresIn: try activityExpiry(arguments))
        case "activity_off":
            return .activityOff(activity: try activityName(arguments))
        case "matches":
            return .matches(byActivity: try matchOrderIsByActivity(arguments))
        // Places.
        case "place_set":
            return .placeSet(
                id: try arguments.optionalPositiveInteger("place_id"),
                label: try arguments.string("label"),
                latitude: try arguments.number("lat"),
                longitude: try arguments.number("lon"),
                radius: try arguments.number("radius"))
        case "place_remove":
            return .placeRemove(id: try arguments.positiveInteger("place_id"))
        case "places":
            return .places(user: try arguments.optionalString("user"))
        case "location_fix":
            return .locationFix(
                latitude: try arguments.number("lat"),
                longitude: try arguments.number("lon"),
                accuracy: try arguments.number("accuracy"),
                time: try arguments.milliseconds("time"))
        case "region":
            return .region(placeID: try arguments.positiveInteger("place_id"), entered: try arguments.regionEvent(), time: try arguments.milliseconds("time"))
        case "where":
            return .whereIs(user: try arguments.string("user"))
        // Memories.
        case "memory_create":
            return try memoryCreate(arguments)
        case "memory_update":
            return try memoryUpdate(arguments)
        case "memory_delete":
            return .memoryDelete(memory: try memoryIdentifier(arguments, "memory"))
        case "memories":
            return .memories
        case "memory":
            return .memory(memory: try memoryIdentifier(arguments, "memory"))
        case "point_add":
            return try pointAdd(arguments)
        case "point_update":
            return try pointUpdate(arguments)
        case "point_delete":
            return .pointDelete(memory: try memoryIdentifier(arguments, "memory"), point: try memoryIdentifier(arguments, "point"))
        // Identities.
        case "identity_signin":
            return .identitySignIn(
                token: try arguments.string("token"), nonce: try arguments.optionalString("nonce"),
                username: try arguments.optionalString("username"), device: try arguments.device())
        case "identity_link":
            return .identityLink(token: try arguments.string("token"), nonce: try arguments.optionalString("nonce"))
        case "identity_unlink":
            return .identityUnlink(issuer: try arguments.string("issuer"), subject: try arguments.string("subject"))
        case "identities":
            return .identities
        case "app_auth":
            return .appAuth(token: try arguments.string("token"), device: try arguments.device())
        // Profiles and sessions.
        case "profile":
            return .profile
        case "profile_set":
            return try profileSet(arguments)
        case "sessions":
            return .sessions
        case "session_revoke":
            return .sessionRevoke(id: try arguments.string("session"))
        case "password_change":
            return .passwordChange(
                oldPassword: try arguments.string("old_password"), newPassword: try arguments.string("new_password"),
                revokeOthers: try arguments.optionalBool("revoke_others") ?? false)
        case "password_reset_request":
            return .passwordResetRequest(login: try arguments.string("login"))
        case "password_reset":
            return .passwordReset(
                login: try arguments.string("login"), code: try arguments.string("code"), newPassword: try arguments.string("new_password"))
        // Blocking.
        case "block":
            return .block(user: try arguments.string("user"))
        case "unblock":
            return .unblock(user: try arguments.string("user"))
        case "blocks":
            return .blocks
        // Reports.
        case "report":
            return try report(arguments)
        // Moderation and deletion.
        case "account_delete":
            // A password, or (an account with none) an ID token of a fresh sign-in.
            if let token = try arguments.optionalString("token") {
                return .accountDeleteWithIdentity(token: token, nonce: try arguments.optionalString("nonce"))
            }
            return .accountDelete(password: try arguments.string("password"))
        case "account_export":
            return .accountExport
        default:
            // The op is echoed for the client's author, but not at any length.
            let shown = op.unicodeScalars.count <= 32 ? op : String(op.unicodeScalars.prefix(32)) + "…"
            throw RequestError(id: arguments.id, code: RequestErrorCode.unknownOp, message: "unknown op \"\(shown)\"")
        }
    }

    /// `since`: `{"epoch": string, "offset": non-negative integer}`, optional.
    private static func since(_ arguments: RequestArguments) throws(RequestError) -> Position? {
        guard let value = arguments.value("since"), value != .null else { return nil }
        guard case .object(let members) = value else { throw arguments.badRequest("since must be an object") }
        let position = RequestArguments(members: members, id: arguments.id)
        guard let epochValue = position.value("epoch") else { throw arguments.badRequest("since.epoch is required") }
        guard case .string(let epoch) = epochValue else { throw arguments.badRequest("since.epoch must be a string") }
        guard let offsetValue = position.value("offset") else { throw arguments.badRequest("since.offset is required") }
        guard let offset = offsetValue.uint64Value else {
            throw arguments.badRequest("since.offset must be a non-negative integer")
        }
        return Position(epoch: epoch, offset: offset)
    }

    /// `client_id`: optional, 1–`maxIDLength` characters.
    private static func clientID(_ arguments: RequestArguments, limits: ProtocolLimits) throws(RequestError) -> String? {
        guard let clientID = try arguments.optionalString("client_id") else { return nil }
        guard RequestArguments.hasLength(clientID, in: 1...limits.maxIDLength) else {
            throw arguments.badRequest("client_id must be 1 to \(limits.maxIDLength) characters")
        }
        return clientID
    }

    /// `prefix`: 1–32 characters (a username is never longer).
    private static func searchPrefix(_ arguments: RequestArguments) throws(RequestError) -> String {
        let prefix = try arguments.string("prefix")
        guard RequestArguments.hasLength(prefix, in: 1...32) else { throw arguments.badRequest("prefix must be 1 to 32 characters") }
        return prefix
    }

    private static func searchLimit(_ arguments: RequestArguments, limits: ProtocolLimits) throws(RequestError) -> Int {
        guard let value = arguments.value("limit"), value != .null else { return limits.defaultSearchLimit }
        guard let limit = value.int64Value, limit >= 1, limit <= Int64(limits.maxSearchLimit) else {
            throw arguments.badRequest("limit must be an integer from 1 to \(limits.maxSearchLimit)")
        }
        return Int(limit)
    }

    private static func friendMessage(_ arguments: RequestArguments, limits: ProtocolLimits) throws(RequestError) -> String {
        let message = try arguments.optionalString("message") ?? RequestDefaults.friendMessage
        guard RequestArguments.hasLength(message, in: 0...limits.maxFriendMessageLength) else {
            throw arguments.badRequest("message must be at most \(limits.maxFriendMessageLength) characters")
        }
        return message
    }

    private static func before(_ arguments: RequestArguments) throws(RequestError) -> UInt64? {
        guard let value = arguments.value("before"), value != .null else { return nil }
        guard let before = value.uint64Value, before > 0 else {
            throw arguments.badRequest("before must be a positive integer")
        }
        return before
    }

    private static func historyLimit(_ arguments: RequestArguments, limits: ProtocolLimits) throws(RequestError) -> Int {
        guard let value = arguments.value("limit"), value != .null else { return limits.defaultHistoryLimit }
        guard let limit = value.int64Value, limit >= 1, limit <= Int64(limits.maxHistoryLimit) else {
            throw arguments.badRequest("limit must be an integer from 1 to \(limits.maxHistoryLimit)")
        }
        return Int(limit)
    }
}
