import HuddleCore
import HuddleProtocol

/// Core replies in their wire form (protocol.md, "Ops"): the reply message for a WebSocket
/// request, or the status and body for an HTTP API request.
enum ReplyEncoding {
    static func message(_ reply: CoreReply, id: String?, token: String?) -> [UInt8] {
        switch reply {
        case .failure(let error):
            return ServerMessage.failure(id: id, code: error.code.rawValue, message: error.message, retryAfterMilliseconds: error.retryAfterMilliseconds)
        default:
            return ServerMessage.success(id: id ?? "", result: result(reply, token: token))
        }
    }

    static func httpResponse(_ reply: CoreReply) -> (status: Int, body: [UInt8]) {
        var body: [UInt8] = []
        switch reply {
        case .failure(let error):
            JSONWriter.append(.object([("error", .object([("code", .string(error.code.rawValue)), ("message", .string(error.message))]))]), to: &body)
            return (httpStatus(error.code), body)
        default:
            JSONWriter.append(result(reply, token: nil), to: &body)
            return (200, body)
        }
    }

    private static func httpStatus(_ code: CoreErrorCode) -> Int {
        switch code {
        case .forbidden: return 403
        default: return 400
        }
    }

    static func result(_ reply: CoreReply, token: String?) -> JSONValue {
        switch reply {
        case .failure(let error):
            return .object([("code", .string(error.code.rawValue)), ("message", .string(error.message))])
        case .account(let user, let expiresAt, _):
            var members: [(String, JSONValue)] = [("user", userObject(user))]
            if let token { members.append(("token", .string(token))) }
            members.append(("expires_at", number(expiresAt)))
            return .object(members)
        case .revoked(let count):
            return .object([("revoked", number(count))])
        case .subscribed(let channel, let epoch, let offset, let recovered, let publications):
            var members: [(String, JSONValue)] = [("channel", .string(channel)), ("epoch", .string(epoch)), ("offset", number(offset))]
            if let recovered { members.append(("recovered", .bool(recovered))) }
            members.append(("publications", .array(publications.map(publicationObject))))
            return .object(members)
        case .unsubscribed:
            return .object([])
        case .published(let epoch, let offset, let time):
            return .object([("epoch", .string(epoch)), ("offset", number(offset)), ("time", number(time))])
        case .history(let channel, let epoch, let offset, let publications, let nextBefore):
            return .object([
                ("channel", .string(channel)), ("epoch", .string(epoch)), ("offset", number(offset)),
                ("publications", .array(publications.map(publicationObject))),
                ("next_before", nextBefore.map(number) ?? .null),
            ])
        case .presence(let channel, let users):
            return .object([("channel", .string(channel)), ("users", .array(users.map(JSONValue.string)))])
        case .disconnected(let count):
            return .object([("closed", number(count))])
        case .done:
            return .object([])
        case .users(let usernames):
            return .object([("users", .array(usernames.map(JSONValue.string)))])
        case .friendRequestSent(let becameFriends):
            return .object([("status", .string(becameFriends ? "friends" : "requested"))])
        case .friendRequests(let incoming, let outgoing):
            return .object([
                ("incoming", .array(incoming.map { requestObject(user: $0.from, $0) })),
                ("outgoing", .array(outgoing.map { requestObject(user: $0.to, $0) })),
            ])
        case .alreadyPublished(let epoch, let offset, let time):
            return .object([("epoch", .string(epoch)), ("offset", number(offset)), ("time", number(time)), ("duplicate", .bool(true))])
        case .duplicate(let first):
            guard case .object(let members) = result(first, token: token) else { return result(first, token: token) }
            return .object(members + [("duplicate", .bool(true))])
        case .readMarker(let channel, let read, let unread, let badge):
            return .object([("channel", .string(channel)), ("read", number(read)), ("unread", number(unread)), ("badge", number(badge))])
        case .unread(let rooms, let total):
            let list = rooms.map { room -> JSONValue in
                .object([("channel", .string(room.channel)), ("offset", number(room.offset)), ("read", number(room.read)), ("unread", number(room.unread))])
            }
            return .object([("rooms", .array(list)), ("total", number(total))])
        case .friends(let list):
            return .object([("friends", .array(list.map { .object([("username", .string($0.username)), ("online", .bool($0.online))]) }))])

        // Feed.
        case .feedPost(let post):
            return .object([("post", FeedEncoding.post(post))])
        case .feedPage(let posts, let nextBefore):
            return FeedEncoding.page("posts", posts.map(FeedEncoding.post), nextBefore: nextBefore)
        case .postLike(let post, let liked, let likes):
            return .object([("post", number(post)), ("liked", .bool(liked)), ("likes", number(likes))])
        case .postComment(let post, let comment, let comments):
            return .object([("post", number(post)), ("comment", FeedEncoding.comment(comment)), ("comments", number(comments))])
        case .postComments(let post, let comments, let nextBefore):
            return FeedEncoding.page("comments", comments.map(FeedEncoding.comment), post: post, nextBefore: nextBefore)
        // Activities.
        case .activities(let available, let mine):
            return .object([("available", .array(available.map(JSONValue.string))), ("mine", .array(mine.map(activityStatusObject)))])
        case .activityStatus(let status):
            return activityStatusObject(status)
        case .matches(let list):
            return .object([("matches", .array(list.map(matchObject)))])
        // Places.
        case .place(let place):
            return .object([("place", placeObject(place))])
        case .places(let places):
            return .object([("places", .array(places.map(placeObject)))])
        case .location(let whereabouts, let changed, let ignored):
            var members = whereaboutsMembers(whereabouts)
            members.append(("changed", .bool(changed)))
            if ignored { members.append(("ignored", .bool(true))) }
            return .object(members)
        case .whereabouts(let user, let whereabouts):
            return .object([("user", .string(user))] + whereaboutsMembers(whereabouts))
        case .locationSubscribed(let channel, let epoch, let offset, let recovered, let publications, let current):
            return locationSubscription(channel, epoch, offset, recovered, publications, current: current)
        // Memories.
        case .memory(let memory, let includingPoints):
            return .object([("memory", MemoryEncoding.memory(memory, includingPoints: includingPoints))])
        case .memories(let memories):
            return .object([("memories", .array(memories.map { MemoryEncoding.memory($0, includingPoints: false) }))])
        case .memoryPoint(let memory, let point):
            return .object([("memory", number(memory)), ("point", MemoryEncoding.point(point))])
        case .keptMemory(let memory, let pointCount):
            return .object([("memory", MemoryEncoding.memory(memory, includingPoints: false, pointCount: pointCount))])
        }
    }

    /// A request as its list shows it: `user` is the other side.
    private static func requestObject(user: String, _ request: FriendRequest) -> JSONValue {
        .object([("user", .string(user)), ("message", .string(request.message)), ("time", number(request.time))])
    }

    private static func userObject(_ user: UserInfo) -> JSONValue {
        .object([("username", .string(user.username)), ("email", .string(user.email))])
    }

    private static func publicationObject(_ publication: Publication) -> JSONValue {
        ServerMessage.publicationObject(
            offset: publication.offset, type: publication.type, from: publication.from, data: publication.data, time: publication.time,
            clientID: publication.clientID)
    }

    private static func number<Integer: BinaryInteger>(_ value: Integer) -> JSONValue { .number(String(value)) }
}
