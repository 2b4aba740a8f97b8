import HuddleProtocol

/// What the server asks of the core, on behalf of a connection, of the HTTP API or of itself:
/// one envelope for every request (docs/ARCHITECTURE.md, "Requests").
///
/// Requests are ephemeral: they are never logged. Handling one may produce durable
/// `CoreCommand`s (returned in `CoreStep.commands`) and always produces the outputs to send.
/// A request naming a connection the core does not know (never opened, closed, or closed by the
/// core itself after a logout) is ignored: it yields an empty step.
public struct CoreRequest: Sendable, Equatable {
    /// The client connection the request came on; nil for the HTTP API and for what the server
    /// itself asks (ticks, photo access).
    public var connection: ConnectionRef?
    /// The id the reply carries; nil when none is owed by id (connection lifecycle, ticks,
    /// photo access, the token of an upgrade, answered by a sign-in event).
    public var requestID: String?
    /// The client's own `client_id` for a keyed write (protocol.md, "Retries"): a retry while
    /// the first result is kept gets that result again, marked duplicate, and changes nothing.
    /// A publication keeps its own instead (readers see it).
    public var clientID: String?
    public var body: CoreRequestBody

    public init(connection: ConnectionRef? = nil, requestID: String? = nil, clientID: String? = nil, _ body: CoreRequestBody) {
        self.connection = connection
        self.requestID = requestID
        self.clientID = clientID
        self.body = body
    }

    /// A client's decoded request, as it came on `connection`.
    public init(_ request: ClientRequest, on connection: ConnectionRef) {
        self.init(connection: connection, requestID: request.id, clientID: request.clientID, .operation(request.operation))
    }

    public static let tick = CoreRequest(.tick)
    public static let expireActivities = CoreRequest(.expireActivities)
    public static let continueErasure = CoreRequest(.continueErasure)
    public static let recordSessionsSeen = CoreRequest(.recordSessionsSeen)
}

/// What a request asks for: a client's op as the protocol decoded it, or one of the requests
/// only the server makes (the second halves of sign-ins, the HTTP API, photos, lifecycle).
public enum CoreRequestBody: Sendable, Equatable {
    /// A client's op (protocol.md, "Ops"). `ping` never reaches the core, and sign-ins come as
    /// the cases below: the server hashes tokens and passwords, which the core never does.
    case operation(Operation)

    // Sign-ins.

    /// First half of a signup: every rule is judged before the password is hashed, so a signup
    /// that will be refused costs no KDF work.
    case beginSignUp(username: String, email: String, password: String, address: String)
    /// The server's answer to `CoreOutput.hashNewPassword`: the password hashed, and what the
    /// core needs to judge its rules again (a race may have taken the name) without seeing it.
    case signUp(
        username: String, email: String, passwordLength: Int, passwordEqualsUsername: Bool, address: String,
        credentials: Credentials, session: NewSession)
    /// `login` is a username or an email address.
    case beginLogin(login: String, address: String, password: String)
    /// The server's answer to `CoreOutput.verifyPassword`; `username` is the one it was asked
    /// about (nil: an unknown login, hashed only so that it costs what a known one does).
    /// `refusal`: the password was not checked because the server refused the attempt first
    /// (cluster mode's login limit shared by the nodes, or its Redis unreachable); it is the
    /// reply, and no failure is counted.
    case finishLogin(username: Username?, passwordMatched: Bool, address: String, session: NewSession, refusal: CoreError? = nil)
    /// The `auth` op, or (no `requestID`) the token that came with the upgrade request.
    case authenticate(tokenHash: [UInt8])

    // HTTP API (no connection; `history` comes as an `operation`, which may read any channel).

    /// Published with `from: nil`, to any valid channel.
    case serverPublish(channel: String, type: String, data: String)
    /// Close every live connection of the user with 4001; sessions stay valid.
    case disconnectUser(username: String)
    /// The operator's moderation calls (suspensions, reports).
    case moderation(ModerationRequest)
    /// The operator removes a publication (a tombstone at its offset) or a post.
    case removeContent(RemovedContent)
    /// The operator deletes an account (`DELETE /api/v1/users/NAME`).
    case deleteUser(username: String)
    /// The server's answer to `CoreOutput.verifyAccountDeletion`.
    case finishAccountDeletion(username: Username, passwordMatched: Bool, address: String)
    /// The server asks for the next chunk of a pending erasure (`HuddleCore+ErasureChunks`).
    case continueErasure

    // Photos over HTTP. `caller` is where the answer goes (`CoreOutput.photoAccess`): an HTTP
    // request the server registered, not a connection the core knows; the session token
    // (its hash) is checked on every request.

    /// Before the body is read: may this token upload up to `size` bytes (the declared length,
    /// or the largest photo for a chunked body)?
    case authorizePhotoUpload(caller: ConnectionRef, tokenHash: [UInt8], size: Int)
    /// The server stored the bytes under `hash` (their SHA-256, lowercase hex): record the owner.
    case recordPhoto(caller: ConnectionRef, tokenHash: [UInt8], hash: String, size: Int)
    /// May this token read the photo?
    case authorizePhotoRead(caller: ConnectionRef, tokenHash: [UInt8], hash: String)
    /// `GET /api/v1/export`: may this token take its user's export archive now? The answer
    /// carries the archive's JSON part (`PhotoAccess.exportAllowed`).
    case exportArchive(caller: ConnectionRef, tokenHash: [UInt8])

    // Connection lifecycle and time.

    case connectionOpened(address: String)
    case connectionClosed
    /// Periodic (every ~250 ms): presence grace expiry and purges.
    case tick
    /// Periodic, with every `tick`: clears the statuses that ran out and ends their matches.
    /// A request of its own, not part of `tick`, because it writes: while storage refuses
    /// writes the server holds it back (reads already treat such statuses as off), instead of
    /// making commands every tick that the log cannot take.
    case expireActivities
    /// Periodic, with every `tick`, on every node: logs the last seen of the sessions this
    /// node saw signing in or disconnecting, for those whose recorded one is older than
    /// `CoreConfiguration.sessionSeenIntervalMilliseconds`. A write of its own, like
    /// `expireActivities`, held back while storage refuses writes.
    case recordSessionsSeen

    // Passwords (protocol.md, "Passwords").

    /// The server's answer to `CoreOutput.changePassword`: `verified` is the verifier the old
    /// password was checked against; `newCredentials` the new password hashed, nil when the old
    /// one did not match.
    case finishPasswordChange(username: Username, verified: Credentials, newCredentials: Credentials?, revokeOthers: Bool, address: String)
    /// `password_reset_request`: the server drew a code and keeps it for the mail; the core gets
    /// its SHA-256 and when it expires.
    case requestPasswordReset(login: String, address: String, codeHash: [UInt8], expiresAt: Int64)
    /// `password_reset`, the code already hashed by the server.
    case beginPasswordReset(login: String, address: String, codeHash: [UInt8], newPassword: String)
    /// The server's answer to `CoreOutput.hashResetPassword`.
    case finishPasswordReset(username: Username, codeHash: [UInt8], credentials: Credentials, address: String)

    // Cluster mode.

    /// Another node says `user` is online there (a connection, or its grace period) or no
    /// longer is. Friends here hear of it only when the user's presence as a whole changes.
    case presenceElsewhere(user: Username, node: String, online: Bool)
    /// The node stopped, or its lease ran out: nobody is online there any more.
    case nodeGone(node: String)
    /// `tick`'s node-local part alone (grace expiry, closing connections whose session
    /// expired, throttle purges), for a node not holding the ticker lease: the durable part
    /// (purges, trims) reaches it as the ticker's commands.
    case localTick

    // Identities.

    /// An `identity_signin`, `identity_link` or `app_auth` whose token the server verified off
    /// the core thread (or refused: the proof's `refusal` is the reply).
    case identityVerified(IdentityProof)
}
