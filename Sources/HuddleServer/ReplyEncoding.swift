import HuddleCore
import HuddleProtocol

/// Core replies in their wire form: each `CoreReply` as the typed `ReplyResult` HuddleProtocol
/// encodes (protocol.md, "Ops"), sent as the reply message of a WebSocket request or as the
/// status and body of an HTTP API request.
enum ReplyEncoding {
    static func message(_ reply: CoreReply, id: String?, token: String?) -> [UInt8] {
        switch reply {
        case .failure(let error):
            return ServerReply(id: id, outcome: .failure(replyError(error))).message
        case .published(let epoch, let offset, let time):
            // Every acknowledged write's reply: written directly, not through a result tree.
            return ServerMessage.published(id: id ?? "", PublishResult(epoch: epoch, offset: offset, time: time, duplicate: false))
        case .alreadyPublished(let epoch, let offset, let time):
            return ServerMessage.published(id: id ?? "", PublishResult(epoch: epoch, offset: offset, time: time, duplicate: true))
        default:
            return ServerMessage.success(id: id ?? "", result: result(reply, token: token).json)
        }
    }

    static func httpResponse(_ reply: CoreReply) -> (status: Int, body: [UInt8]) {
        switch reply {
        case .failure(let error):
            return (httpStatus(error.code), ReplyError(code: error.code.rawValue, message: error.message).httpBody)
        default:
            return (200, JSONWriter.bytes(result(reply, token: nil).json))
        }
    }

    private static func replyError(_ error: CoreError) -> ReplyError {
        ReplyError(code: error.code.rawValue, message: error.message, retryAfterMilliseconds: error.retryAfterMilliseconds)
    }

    private static func httpStatus(_ code: CoreErrorCode) -> Int {
        switch code {
        case .forbidden: return 403
        case .userNotFound, .reportNotFound, .publicationNotFound, .postNotFound, .commentNotFound: return 404
        default: return 400
        }
    }

    /// The typed result of a successful reply (a failure has none: `message` sends its error).
    static func result(_ reply: CoreReply, token: String?) -> ReplyResult {
        switch reply {
        case .failure:
            return .empty
        case .identities(let identities):
            return .identities(identities)
        case .account(let user, let expiresAt, _):
            return .session(AccountSession(user: user, token: token, expiresAt: expiresAt))
        case .revoked(let count):
            return .revoked(count)
        case .subscribed(let channel, let epoch, let offset, let recovered, let publications):
            return .subscribed(Subscription(channel: channel, epoch: epoch, offset: offset, recovered: recovered, publications: publications.map(shown)))
        case .unsubscribed, .done:
            return .empty
        case .published(let epoch, let offset, let time):
            return .published(PublishResult(epoch: epoch, offset: offset, time: time, duplicate: false))
        case .history(let channel, let epoch, let offset, let publications, let nextBefore):
            return .history(HistoryPage(channel: channel, epoch: epoch, offset: offset, publications: publications.map(shown), nextBefore: nextBefore))
        case .presence(let channel, let users):
            return .presence(ChannelPresence(channel: channel, users: users))
        case .disconnected(let count):
            return .closed(count)
        case .users(let usernames, let profiles):
            let names = usernames.compactMap { user in profiles[user].displayName.map { (username: user, displayName: $0) } }
            return .users(UserSearchResult(users: usernames, displayNames: names))
        case .friendRequestSent(let becameFriends):
            return .friendRequest(becameFriends ? .friends : .requested)
        case .friendRequests(let incoming, let outgoing, let profiles):
            return .friendRequests(FriendRequestList(
                incoming: incoming.map { FriendRequestEntry(user: $0.from, message: $0.message, time: $0.time, profile: profiles[$0.from]) },
                outgoing: outgoing.map { FriendRequestEntry(user: $0.to, message: $0.message, time: $0.time, profile: profiles[$0.to]) }))
        case .alreadyPublished(let epoch, let offset, let time):
            return .published(PublishResult(epoch: epoch, offset: offset, time: time, duplicate: true))
        case .duplicate(let first):
            return .duplicate(result(first, token: token))
        case .readMarker(let channel, let read, let unread, let badge):
            return .readMarker(ReadMarker(channel: channel, read: read, unread: unread, badge: badge))
        case .unread(let rooms, let total):
            return .unread(UnreadSummary(rooms: rooms, total: total))
        case .friends(let list):
            return .friends(list)
        // Feed.
        case .feedPost(let post):
            return .post(post)
        case .feedPage(let posts, let nextBefore):
            return .feed(FeedPage(posts: posts, nextBefore: nextBefore))
        case .postLike(let post, let liked, let likes):
            return .like(PostLike(post: post, liked: liked, likes: likes))
        case .postComment(let post, let comment, let comments):
            return .comment(PostComment(post: post, comment: comment, comments: comments))
        case .postComments(let post, let comments, let nextBefore):
            return .comments(CommentPage(post: post, comments: comments, nextBefore: nextBefore))
        // Activities.
        case .activities(let available, let mine):
            return .activities(ActivityList(available: available, mine: mine))
        case .activityStatus(let status):
            return .activityStatus(status)
        case .matches(let list):
            return .matches(list)
        // Places: coordinates only in `place` and `places`, the owner's own replies.
        case .place(let place):
            return .place(place)
        case .places(let places):
            return .places(places)
        case .location(let decided, let changed, let ignored):
            return .location(PlaceDecision(place: decided.label, placeID: decided.placeID, since: decided.since, changed: changed, ignored: ignored))
        case .whereabouts(let user, let decided):
            return .whereabouts(decided.shown(of: user))
        case .locationSubscribed(let channel, let epoch, let offset, let recovered, let publications, let current):
            let owner = LocationChannel.user(in: channel) ?? ""
            return .subscribed(Subscription(
                channel: channel, epoch: epoch, offset: offset, recovered: recovered, publications: publications.map(shown),
                current: current.shown(of: owner)))
        // Memories.
        case .memory(let memory, let includingPoints):
            return .memory(memory.shown(includingPoints: includingPoints))
        case .memories(let memories):
            return .memories(memories.map { $0.shown() })
        case .memoryPoint(let memory, let point):
            return .memoryPoint(memory: memory, point)
        case .keptMemory(let memory, let pointCount):
            return .memory(memory.shown(pointCount: pointCount))
        // Profiles and sessions.
        case .profile(let user, let profile):
            return .profile(OwnProfile(username: user, profile: profile))
        case .sessions(let sessions, let total):
            return .sessions(SessionList(sessions: sessions, total: total))
        // Reports.
        case .reportFiled(let id):
            return .reportFiled(id)
        case .export(let data):
            return .export(data)
        case .reports(let page):
            return .reports(page)
        }
    }

    /// A stored publication as a result lists it: its `data` is JSON already and goes in verbatim.
    private static func shown(_ publication: Publication) -> ChannelPublication {
        ChannelPublication(
            channel: publication.channel, epoch: publication.epoch, offset: publication.offset, type: publication.type, from: publication.from,
            data: .raw(publication.data), time: publication.time, clientID: publication.clientID, deleted: publication.removed)
    }
}
