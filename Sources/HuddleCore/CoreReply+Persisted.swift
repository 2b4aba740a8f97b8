import HuddleProtocol

/// Replies as kept results log and snapshot them (`CoreCommand.keepResult`). An unlabeled
/// associated value is named by its position (`_0`, `_1`), as format 0 named it.
extension CoreReply: PersistedValue {
    var persisted: JSONValue {
        switch self {
        case .failure(let error):
            .variant("failure", [("_0", error.persisted)])
        case .identities(let identities):
            .variant("identities", [("_0", identities.persisted)])
        case .account(let user, let expiresAt, let isNewSession):
            .variant("account", [("user", user.persisted), ("expiresAt", expiresAt.persisted), ("isNewSession", isNewSession.persisted)])
        case .revoked(let count):
            .variant("revoked", [("count", count.persisted)])
        case .subscribed(let channel, let epoch, let offset, let recovered, let publications):
            .variant("subscribed", [
                ("channel", channel.persisted), ("epoch", epoch.persisted), ("offset", offset.persisted), ("recovered", recovered?.persisted),
                ("publications", publications.persisted),
            ])
        case .unsubscribed:
            .variant("unsubscribed")
        case .published(let epoch, let offset, let time):
            .variant("published", [("epoch", epoch.persisted), ("offset", offset.persisted), ("time", time.persisted)])
        case .history(let channel, let epoch, let offset, let publications, let nextBefore):
            .variant("history", [
                ("channel", channel.persisted), ("epoch", epoch.persisted), ("offset", offset.persisted), ("publications", publications.persisted),
                ("nextBefore", nextBefore?.persisted),
            ])
        case .presence(let channel, let users):
            .variant("presence", [("channel", channel.persisted), ("users", users.persisted)])
        case .disconnected(let count):
            .variant("disconnected", [("count", count.persisted)])
        case .done:
            .variant("done")
        case .users(let users, let profiles):
            .variant("users", [("_0", users.persisted), ("profiles", profiles.count == 0 ? nil : profiles.persisted)])
        case .friendRequestSent(let becameFriends):
            .variant("friendRequestSent", [("becameFriends", becameFriends.persisted)])
        case .friendRequests(let incoming, let outgoing, let profiles):
            .variant("friendRequests", [
                ("incoming", incoming.persisted), ("outgoing", outgoing.persisted), ("profiles", profiles.count == 0 ? nil : profiles.persisted),
            ])
        case .friends(let friends):
            .variant("friends", [("_0", friends.persisted)])
        case .alreadyPublished(let epoch, let offset, let time):
            .variant("alreadyPublished", [("epoch", epoch.persisted), ("offset", offset.persisted), ("time", time.persisted)])
        case .duplicate(let reply):
            .variant("duplicate", [("_0", reply.persisted)])
        case .readMarker(let channel, let read, let unread, let badge):
            .variant("readMarker", [("channel", channel.persisted), ("read", read.persisted), ("unread", unread.persisted), ("badge", badge.persisted)])
        case .unread(let rooms, let total):
            .variant("unread", [("rooms", rooms.persisted), ("total", total.persisted)])
        case .feedPost(let post):
            .variant("feedPost", [("_0", post.persisted)])
        case .feedPage(let posts, let nextBefore):
            .variant("feedPage", [("posts", posts.persisted), ("nextBefore", nextBefore?.persisted)])
        case .postLike(let post, let liked, let likes):
            .variant("postLike", [("post", post.persisted), ("liked", liked.persisted), ("likes", likes.persisted)])
        case .postComment(let post, let comment, let comments):
            .variant("postComment", [("post", post.persisted), ("comment", comment.persisted), ("comments", comments.persisted)])
        case .postComments(let post, let comments, let nextBefore):
            .variant("postComments", [("post", post.persisted), ("comments", comments.persisted), ("nextBefore", nextBefore?.persisted)])
        case .activities(let available, let mine):
            .variant("activities", [("available", available.persisted), ("mine", mine.persisted)])
        case .activityStatus(let status):
            .variant("activityStatus", [("_0", status.persisted)])
        case .matches(let matches):
            .variant("matches", [("_0", matches.persisted)])
        case .place(let place):
            .variant("place", [("_0", place.persisted)])
        case .places(let places):
            .variant("places", [("_0", places.persisted)])
        case .location(let whereabouts, let changed, let ignored):
            .variant("location", [("_0", whereabouts.persisted), ("changed", changed.persisted), ("ignored", ignored.persisted)])
        case .whereabouts(let user, let whereabouts):
            .variant("whereabouts", [("user", user.persisted), ("_1", whereabouts.persisted)])
        case .locationSubscribed(let channel, let epoch, let offset, let recovered, let publications, let current):
            .variant("locationSubscribed", [
                ("channel", channel.persisted), ("epoch", epoch.persisted), ("offset", offset.persisted), ("recovered", recovered?.persisted),
                ("publications", publications.persisted), ("current", current.persisted),
            ])
        case .memory(let memory, let includingPoints):
            .variant("memory", [("_0", memory.persisted), ("includingPoints", includingPoints.persisted)])
        case .memories(let memories):
            .variant("memories", [("_0", memories.persisted)])
        case .memoryPoint(let memory, let point):
            .variant("memoryPoint", [("memory", memory.persisted), ("_1", point.persisted)])
        case .keptMemory(let memory, let pointCount):
            .variant("keptMemory", [("_0", memory.persisted), ("pointCount", pointCount.persisted)])
        // Profiles and sessions.
        case .profile(let user, let profile):
            .variant("profile", [("user", user.persisted), ("displayName", profile.displayName?.persisted), ("avatar", profile.avatar?.persisted)])
        case .sessions(let sessions, let total):
            .variant("sessions", [("_0", sessions.persisted), ("total", total.persisted)])
        // Reports.
        case .reportFiled(let id):
            .variant("reportFiled", [("id", id.persisted)])
        case .export(let data):
            .variant("export", [("_0", data)])
        case .reports(let page):
            .variant("reports", [("reports", page.reports.persisted), ("nextAfter", page.nextAfter?.persisted)])
        }
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let variant = try PersistedVariant(persisted, "CoreReply")
        let f = variant.fields
        switch variant.name {
        case "failure": self = .failure(try f("_0"))
        case "identities": self = .identities(try f("_0"))
        case "account": self = .account(user: try f("user"), expiresAt: try f("expiresAt"), isNewSession: try f("isNewSession"))
        case "revoked": self = .revoked(count: try f("count"))
        case "subscribed":
            self = .subscribed(
                channel: try f("channel"), epoch: try f("epoch"), offset: try f("offset"), recovered: try f.optional("recovered"),
                publications: try f("publications"))
        case "unsubscribed": self = .unsubscribed
        case "published": self = .published(epoch: try f("epoch"), offset: try f("offset"), time: try f("time"))
        case "history":
            self = .history(
                channel: try f("channel"), epoch: try f("epoch"), offset: try f("offset"), publications: try f("publications"),
                nextBefore: try f.optional("nextBefore"))
        case "presence": self = .presence(channel: try f("channel"), users: try f("users"))
        case "disconnected": self = .disconnected(count: try f("count"))
        case "done": self = .done
        case "users": self = .users(try f("_0"), profiles: try f.optional("profiles") ?? Profiles())
        case "friendRequestSent": self = .friendRequestSent(becameFriends: try f("becameFriends"))
        case "friendRequests":
            self = .friendRequests(incoming: try f("incoming"), outgoing: try f("outgoing"), profiles: try f.optional("profiles") ?? Profiles())
        case "friends": self = .friends(try f("_0"))
        case "alreadyPublished": self = .alreadyPublished(epoch: try f("epoch"), offset: try f("offset"), time: try f("time"))
        case "duplicate": self = .duplicate(try f("_0"))
        case "readMarker": self = .readMarker(channel: try f("channel"), read: try f("read"), unread: try f("unread"), badge: try f("badge"))
        case "unread": self = .unread(rooms: try f("rooms"), total: try f("total"))
        case "feedPost": self = .feedPost(try f("_0"))
        case "feedPage": self = .feedPage(posts: try f("posts"), nextBefore: try f.optional("nextBefore"))
        case "postLike": self = .postLike(post: try f("post"), liked: try f("liked"), likes: try f("likes"))
        case "postComment": self = .postComment(post: try f("post"), comment: try f("comment"), comments: try f("comments"))
        case "postComments": self = .postComments(post: try f("post"), comments: try f("comments"), nextBefore: try f.optional("nextBefore"))
        case "activities": self = .activities(available: try f("available"), mine: try f("mine"))
        case "activityStatus": self = .activityStatus(try f("_0"))
        case "matches": self = .matches(try f("_0"))
        case "place": self = .place(try f("_0"))
        case "places": self = .places(try f("_0"))
        case "location": self = .location(try f("_0"), changed: try f("changed"), ignored: try f("ignored"))
        case "whereabouts": self = .whereabouts(user: try f("user"), try f("_1"))
        case "locationSubscribed":
            self = .locationSubscribed(
                channel: try f("channel"), epoch: try f("epoch"), offset: try f("offset"), recovered: try f.optional("recovered"),
                publications: try f("publications"), current: try f("current"))
        case "memory": self = .memory(try f("_0"), includingPoints: try f("includingPoints"))
        case "memories": self = .memories(try f("_0"))
        case "memoryPoint": self = .memoryPoint(memory: try f("memory"), try f("_1"))
        case "keptMemory": self = .keptMemory(try f("_0"), pointCount: try f("pointCount"))
        // Profiles and sessions.
        case "profile":
            self = .profile(user: try f("user"), UserProfile(displayName: try f.optional("displayName"), avatar: try f.optional("avatar")))
        case "sessions": self = .sessions(try f("_0"), total: try f("total"))
        // Reports.
        case "reportFiled": self = .reportFiled(id: try f("id"))
        case "export":
            guard let data = f.member("_0") else { throw RecordDecodingError("export without its data") }
            self = .export(data)
        case "reports": self = .reports(ReportPage(reports: try f("reports"), nextAfter: try f.optional("nextAfter")))
        default: throw variant.unknown()
        }
    }
}
