/// What the server asks of the core, on behalf of a connection or of the HTTP API.
///
/// Requests are ephemeral: they are never logged. Handling one may produce durable
/// `CoreCommand`s (returned in `CoreStep.commands`) and always produces the outputs to send.
/// A request naming a connection the core does not know (never opened, closed, or closed by the
/// core itself after a logout) is ignored: it yields an empty step.
public enum CoreRequest: Sendable {
    // Accounts.

    /// First half of a signup: every rule is judged before the password is hashed, so a signup
    /// that will be refused costs no KDF work.
    case beginSignUp(ConnectionRef, requestID: String, username: String, email: String, password: String, address: String)
    /// The server's answer to `CoreOutput.hashNewPassword`: the password hashed, and what the
    /// core needs to judge its rules again (a race may have taken the name) without seeing it.
    case signUp(
        ConnectionRef, requestID: String, username: String, email: String, passwordLength: Int, passwordEqualsUsername: Bool,
        address: String, credentials: Credentials, session: NewSession)
    /// `login` is a username or an email address.
    case beginLogin(ConnectionRef, requestID: String, login: String, address: String, password: String)
    /// The server's answer to `CoreOutput.verifyPassword`; `username` is the one it was asked
    /// about (nil: an unknown login, hashed only so that it costs what a known one does).
    case finishLogin(ConnectionRef, requestID: String, username: Username?, passwordMatched: Bool, address: String, session: NewSession)
    /// `requestID` nil: the token came with the upgrade request (header or subprotocol).
    case authenticate(ConnectionRef, requestID: String?, tokenHash: [UInt8])
    case logout(ConnectionRef, requestID: String, all: Bool)
    case whoami(ConnectionRef, requestID: String)

    // Channels.

    case subscribe(ConnectionRef, requestID: String, channel: String, since: ChannelPosition?)
    case unsubscribe(ConnectionRef, requestID: String, channel: String)
    /// `clientID`: the publisher's own id; a retry with the same one, while the first
    /// publication is still kept, is answered with the first one's position and stores nothing.
    case publish(ConnectionRef, requestID: String, channel: String, type: String, data: String, clientID: String? = nil)
    /// A nil connection is the HTTP API, which may read any channel. `limit` is 1…100 (the
    /// server clamps it; the core treats anything below 1 as 1).
    case history(ConnectionRef?, requestID: String, channel: String, before: UInt64?, limit: Int)
    case presence(ConnectionRef, requestID: String, channel: String)
    /// HTTP API: published with `from: nil`, to any valid channel.
    case serverPublish(requestID: String, channel: String, type: String, data: String)
    /// HTTP API: close every live connection of the user with 4001; sessions stay valid.
    case disconnectUser(requestID: String, username: String)

    // Friends (protocol.md, "Friends"). `user` is as the client typed it; the core
    // canonicalizes it.

    /// Up to `limit` usernames starting with `prefix`, the caller excluded.
    case searchUsers(ConnectionRef, requestID: String, prefix: String, limit: Int)
    case sendFriendRequest(ConnectionRef, requestID: String, user: String, message: String)
    case listFriendRequests(ConnectionRef, requestID: String)
    /// Accept (`accept`) or decline the request `user` sent the caller.
    case answerFriendRequest(ConnectionRef, requestID: String, user: String, accept: Bool)
    /// Withdraw the caller's own request to `user`.
    case cancelFriendRequest(ConnectionRef, requestID: String, user: String)
    case removeFriend(ConnectionRef, requestID: String, user: String)
    case listFriends(ConnectionRef, requestID: String)

    // Chat (protocol.md, "Chat").

    case markRead(ConnectionRef, requestID: String, channel: String, offset: UInt64)
    case unreadCounts(ConnectionRef, requestID: String)
    /// Ephemeral: never stored or logged.
    case typing(ConnectionRef, requestID: String, channel: String)

    // Feed.
    // protocol.md, "Feed". Texts come checked by the protocol layer; the core clamps page
    // sizes to 1…`Feed.maxPageSize`.

    case createPost(ConnectionRef, requestID: String, text: String, activity: String?, at: Int64?)
    /// The caller's and their friends' posts, newest first, ids below `before`.
    case listFeed(ConnectionRef, requestID: String, before: UInt64?, limit: Int)
    /// `liked` nil toggles; otherwise sets, and setting the state the like has is refused.
    case likePost(ConnectionRef, requestID: String, post: UInt64, liked: Bool?)
    case commentOnPost(ConnectionRef, requestID: String, post: UInt64, text: String)
    /// A post's comments, newest first, ids below `before`.
    case listComments(ConnectionRef, requestID: String, post: UInt64, before: UInt64?, limit: Int)
    case deletePost(ConnectionRef, requestID: String, post: UInt64)

    // Activities.

    /// protocol.md, "Activities and matches". `activity` is as the client typed it (any case).
    case listActivities(ConnectionRef, requestID: String)
    /// `friends` nil: every friend. `expiresInSeconds` nil: the configured default.
    case activityOn(ConnectionRef, requestID: String, activity: String, friends: [String]?, expiresInSeconds: Int64?)
    case activityOff(ConnectionRef, requestID: String, activity: String)
    /// Newest first, or (`byActivity`) grouped by activity in the list's order.
    case listMatches(ConnectionRef, requestID: String, byActivity: Bool)
    /// Periodic, with every `tick`: clears the statuses that ran out and ends their matches.
    /// A request of its own, not part of `tick`, because it writes: while storage refuses
    /// writes the server holds it back (reads already treat such statuses as off), instead of
    /// making commands every tick that the log cannot take.
    case expireActivities

    // Places.
    // Places and location (protocol.md, "Places and location"). Coordinates in degrees,
    // distances in metres, times in milliseconds since the Unix epoch.

    /// Creates a place (`id` nil) or replaces the caller's place `id`.
    case setPlace(ConnectionRef, requestID: String, id: UInt64?, label: String, latitude: Double, longitude: Double, radius: Double)
    case removePlace(ConnectionRef, requestID: String, id: UInt64)
    /// The caller's places with their coordinates; `user`, if given, must be the caller.
    case listPlaces(ConnectionRef, requestID: String, user: String?)
    /// A raw fix from the caller's phone, taken at `time` (the phone's clock).
    case reportLocation(ConnectionRef, requestID: String, latitude: Double, longitude: Double, accuracy: Double, time: Int64)
    /// The phone's region monitoring entered (`entered`) or left the caller's place `placeID`.
    case reportRegion(ConnectionRef, requestID: String, placeID: UInt64, entered: Bool, time: Int64)
    /// `where`: the caller's or a friend's decided place, without coordinates.
    case locate(ConnectionRef, requestID: String, user: String)

    // Memories.
    // (protocol.md, "Memories and photos"). `memory` and `point` are ids.

    case createMemory(ConnectionRef, requestID: String, MemoryFields)
    case updateMemory(ConnectionRef, requestID: String, memory: UInt64, MemoryFields)
    case deleteMemory(ConnectionRef, requestID: String, memory: UInt64)
    case listMemories(ConnectionRef, requestID: String)
    case readMemory(ConnectionRef, requestID: String, memory: UInt64)
    case addMemoryPoint(ConnectionRef, requestID: String, memory: UInt64, MemoryPointFields)
    case updateMemoryPoint(ConnectionRef, requestID: String, memory: UInt64, point: UInt64, MemoryPointFields)
    case deleteMemoryPoint(ConnectionRef, requestID: String, memory: UInt64, point: UInt64)

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

    // Connection lifecycle.

    case connectionOpened(ConnectionRef, address: String)
    case connectionClosed(ConnectionRef)
    /// Periodic (every ~250 ms): presence grace expiry and purges.
    case tick

    // Keyed writes.

    /// A write (`request`, from `connection` with `requestID`) that the client sent with its
    /// own `client_id` (protocol.md, "Retries"): a retry while the first result is kept gets
    /// that result again, marked duplicate, and changes nothing. `op` is the wire op's name.
    indirect case keyed(ConnectionRef, requestID: String, op: String, clientID: String, CoreRequest)
}
