import HuddleProtocol

/// The log's commands, by hand: each case is `{"caseName": {label: value…}}` with the names
/// below, which are the disk format (format 0 took them from the Swift names; they are frozen
/// here, so the Swift names may change).
extension CoreCommand: PersistedValue {
    var persisted: JSONValue {
        switch self {
        case .signUp(let username, let email, let credentials, let session, let time):
            .variant("signUp", [
                ("username", username.persisted), ("email", email.persisted), ("credentials", credentials.persisted),
                ("session", session.persisted), ("time", time.persisted),
            ])
        case .openSession(let username, let session, let time):
            .variant("openSession", [("username", username.persisted), ("session", session.persisted), ("time", time.persisted)])
        case .revokeSessions(let username, let tokenHashes, let time):
            .variant("revokeSessions", [("username", username.persisted), ("tokenHashes", tokenHashes.persisted), ("time", time.persisted)])
        case .purgeExpiredSessions(let tokenHashes, let time):
            .variant("purgeExpiredSessions", [("tokenHashes", tokenHashes.persisted), ("time", time.persisted)])
        case .publish(let channel, let from, let type, let data, let time):
            .variant("publish", [
                ("channel", channel.persisted), ("from", from?.persisted), ("type", type.persisted), ("data", data.persisted), ("time", time.persisted),
            ])
        case .trimExpiredHistory(let channels, let time):
            .variant("trimExpiredHistory", [("channels", channels.persisted), ("time", time.persisted)])
        case .sendFriendRequest(let from, let to, let message, let time):
            .variant("sendFriendRequest", [("from", from.persisted), ("to", to.persisted), ("message", message.persisted), ("time", time.persisted)])
        case .acceptFriendRequest(let from, let to, let time):
            .variant("acceptFriendRequest", [("from", from.persisted), ("to", to.persisted), ("time", time.persisted)])
        case .dropFriendRequest(let from, let to, let time):
            .variant("dropFriendRequest", [("from", from.persisted), ("to", to.persisted), ("time", time.persisted)])
        case .removeFriend(let user, let friend, let time):
            .variant("removeFriend", [("user", user.persisted), ("friend", friend.persisted), ("time", time.persisted)])
        case .publishWithClientID(let channel, let from, let type, let data, let clientID, let time):
            .variant("publishWithClientID", [
                ("channel", channel.persisted), ("from", from?.persisted), ("type", type.persisted), ("data", data.persisted),
                ("clientID", clientID.persisted), ("time", time.persisted),
            ])
        case .markRead(let user, let channel, let offset, let time):
            .variant("markRead", [("user", user.persisted), ("channel", channel.persisted), ("offset", offset.persisted), ("time", time.persisted)])
        case .createPost(let id, let author, let text, let activity, let at, let time):
            .variant("createPost", [
                ("id", id.persisted), ("author", author.persisted), ("text", text.persisted), ("activity", activity?.persisted),
                ("at", at?.persisted), ("time", time.persisted),
            ])
        case .setLike(let post, let user, let liked, let time):
            .variant("setLike", [("post", post.persisted), ("user", user.persisted), ("liked", liked.persisted), ("time", time.persisted)])
        case .addComment(let post, let id, let author, let text, let time):
            .variant("addComment", [
                ("post", post.persisted), ("id", id.persisted), ("author", author.persisted), ("text", text.persisted), ("time", time.persisted),
            ])
        case .deletePost(let post, let author, let time):
            .variant("deletePost", [("post", post.persisted), ("author", author.persisted), ("time", time.persisted)])
        case .setActivity(let user, let activity, let audience, let expiresAt, let time):
            .variant("setActivity", [
                ("user", user.persisted), ("activity", activity.persisted), ("audience", audience?.persisted),
                ("expiresAt", expiresAt.persisted), ("time", time.persisted),
            ])
        case .clearActivity(let user, let activity, let reason, let time):
            .variant("clearActivity", [("user", user.persisted), ("activity", activity.persisted), ("reason", reason.persisted), ("time", time.persisted)])
        case .startMatch(let user, let partner, let activity, let time):
            .variant("startMatch", [("user", user.persisted), ("partner", partner.persisted), ("activity", activity.persisted), ("time", time.persisted)])
        case .endMatch(let user, let partner, let activity, let reason, let time):
            .variant("endMatch", [
                ("user", user.persisted), ("partner", partner.persisted), ("activity", activity.persisted), ("reason", reason.persisted),
                ("time", time.persisted),
            ])
        case .setPlace(let user, let place, let time):
            .variant("setPlace", [("user", user.persisted), ("place", place.persisted), ("time", time.persisted)])
        case .removePlace(let user, let placeID, let time):
            .variant("removePlace", [("user", user.persisted), ("placeID", placeID.persisted), ("time", time.persisted)])
        case .updateLocation(let user, let location, let time):
            .variant("updateLocation", [("user", user.persisted), ("location", location.persisted), ("time", time.persisted)])
        case .createMemory(let owner, let id, let title, let date, let placeName, let position, let time):
            .variant("createMemory", memoryMembers(owner, id, title, date, placeName, position, time))
        case .updateMemory(let owner, let id, let title, let date, let placeName, let position, let time):
            .variant("updateMemory", memoryMembers(owner, id, title, date, placeName, position, time))
        case .deleteMemory(let owner, let id, let time):
            .variant("deleteMemory", [("owner", owner.persisted), ("id", id.persisted), ("time", time.persisted)])
        case .putMemoryPoint(let owner, let memory, let point, let time):
            .variant("putMemoryPoint", [("owner", owner.persisted), ("memory", memory.persisted), ("point", point.persisted), ("time", time.persisted)])
        case .deleteMemoryPoint(let owner, let memory, let point, let time):
            .variant("deleteMemoryPoint", [("owner", owner.persisted), ("memory", memory.persisted), ("point", point.persisted), ("time", time.persisted)])
        case .addPhotoOwner(let owner, let hash, let size, let time):
            .variant("addPhotoOwner", [("owner", owner.persisted), ("hash", hash.persisted), ("size", size.persisted), ("time", time.persisted)])
        case .keepResult(let user, let op, let clientID, let reply, let time):
            .variant("keepResult", [
                ("user", user.persisted), ("op", op.persisted), ("clientID", clientID.persisted), ("reply", reply.persisted), ("time", time.persisted),
            ])
        case .forgetKeptResults(let before, let time):
            .variant("forgetKeptResults", [("before", before.persisted), ("time", time.persisted)])
        // Identities.
        case .createIdentityAccount(let username, let email, let identity, let time):
            .variant("createIdentityAccount", [
                ("username", username.persisted), ("email", email.persisted), ("identity", identity.persisted), ("time", time.persisted),
            ])
        case .linkIdentity(let username, let identity, let time):
            .variant("linkIdentity", [("username", username.persisted), ("identity", identity.persisted), ("time", time.persisted)])
        case .unlinkIdentity(let username, let issuer, let subject, let time):
            .variant("unlinkIdentity", [
                ("username", username.persisted), ("issuer", issuer.persisted), ("subject", subject.persisted), ("time", time.persisted),
            ])
        case .spendNonce(let issuer, let subject, let nonce, let expiresAt, let time):
            .variant("spendNonce", [
                ("issuer", issuer.persisted), ("subject", subject?.persisted), ("nonce", nonce.persisted), ("expiresAt", expiresAt.persisted),
                ("time", time.persisted),
            ])
        // Profiles and sessions.
        case .setProfile(let user, let displayName, let avatar, let time):
            .variant("setProfile", [
                ("user", user.persisted), ("displayName", displayName?.persisted), ("avatar", avatar?.persisted), ("time", time.persisted),
            ])
        case .seeSession(let username, let tokenHash, let time):
            .variant("seeSession", [("username", username.persisted), ("tokenHash", tokenHash.persisted), ("time", time.persisted)])
        // Passwords.
        case .setCredentials(let username, let credentials, let time):
            .variant("setCredentials", [("username", username.persisted), ("credentials", credentials.persisted), ("time", time.persisted)])
        case .issuePasswordReset(let username, let codeHash, let expiresAt, let time):
            .variant("issuePasswordReset", [
                ("username", username.persisted), ("codeHash", codeHash.persisted), ("expiresAt", expiresAt.persisted), ("time", time.persisted),
            ])
        case .failPasswordReset(let username, let time):
            .variant("failPasswordReset", [("username", username.persisted), ("time", time.persisted)])
        case .resetPassword(let username, let credentials, let time):
            .variant("resetPassword", [("username", username.persisted), ("credentials", credentials.persisted), ("time", time.persisted)])
        // Blocking.
        case .block(let user, let blocked, let time):
            .variant("block", [("user", user.persisted), ("blocked", blocked.persisted), ("time", time.persisted)])
        case .unblock(let user, let blocked, let time):
            .variant("unblock", [("user", user.persisted), ("blocked", blocked.persisted), ("time", time.persisted)])
        // Moderation.
        case .suspend(let user, let reason, let until, let time):
            .variant("suspend", [("user", user.persisted), ("reason", reason.persisted), ("until", until?.persisted), ("time", time.persisted)])
        case .unsuspend(let user, let time):
            .variant("unsuspend", [("user", user.persisted), ("time", time.persisted)])
        case .fileReport(let report):
            .variant("fileReport", [("report", report.persisted)])
        case .resolveReport(let id, let action, let note, let time):
            .variant("resolveReport", [("id", id.persisted), ("action", action.persisted), ("note", note.persisted), ("time", time.persisted)])
        case .removePublication(let channel, let offset, let time):
            .variant("removePublication", [("channel", channel.persisted), ("offset", offset.persisted), ("time", time.persisted)])
        case .eraseUser(let username, let time):
            .variant("eraseUser", [("username", username.persisted), ("time", time.persisted)])
        case .eraseChannels(let username, let channels, let time):
            .variant("eraseChannels", [("username", username.persisted), ("channels", channels.persisted), ("time", time.persisted)])
        case .finishErasure(let username, let time):
            .variant("finishErasure", [("username", username.persisted), ("time", time.persisted)])
        case .removeComment(let post, let comment, let time):
            .variant("removeComment", [("post", post.persisted), ("comment", comment.persisted), ("time", time.persisted)])
        }
    }

    private func memoryMembers(
        _ owner: Username, _ id: UInt64, _ title: String, _ date: String, _ placeName: String, _ position: MemoryPosition?, _ time: Int64
    ) -> [(String, JSONValue?)] {
        [
            ("owner", owner.persisted), ("id", id.persisted), ("title", title.persisted), ("date", date.persisted),
            ("placeName", placeName.persisted), ("position", position?.persisted), ("time", time.persisted),
        ]
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let variant = try PersistedVariant(persisted, "CoreCommand")
        let f = variant.fields
        switch variant.name {
        case "signUp":
            self = .signUp(username: try f("username"), email: try f("email"), credentials: try f("credentials"), session: try f("session"), time: try f("time"))
        case "openSession":
            self = .openSession(username: try f("username"), session: try f("session"), time: try f("time"))
        case "revokeSessions":
            self = .revokeSessions(username: try f("username"), tokenHashes: try f("tokenHashes"), time: try f("time"))
        case "purgeExpiredSessions":
            self = .purgeExpiredSessions(tokenHashes: try f("tokenHashes"), time: try f("time"))
        case "publish":
            self = .publish(channel: try f("channel"), from: try f.optional("from"), type: try f("type"), data: try f("data"), time: try f("time"))
        case "trimExpiredHistory":
            self = .trimExpiredHistory(channels: try f("channels"), time: try f("time"))
        case "sendFriendRequest":
            self = .sendFriendRequest(from: try f("from"), to: try f("to"), message: try f("message"), time: try f("time"))
        case "acceptFriendRequest":
            self = .acceptFriendRequest(from: try f("from"), to: try f("to"), time: try f("time"))
        case "dropFriendRequest":
            self = .dropFriendRequest(from: try f("from"), to: try f("to"), time: try f("time"))
        case "removeFriend":
            self = .removeFriend(user: try f("user"), friend: try f("friend"), time: try f("time"))
        case "publishWithClientID":
            self = .publishWithClientID(
                channel: try f("channel"), from: try f.optional("from"), type: try f("type"), data: try f("data"), clientID: try f("clientID"),
                time: try f("time"))
        case "markRead":
            self = .markRead(user: try f("user"), channel: try f("channel"), offset: try f("offset"), time: try f("time"))
        case "createPost":
            self = .createPost(
                id: try f("id"), author: try f("author"), text: try f("text"), activity: try f.optional("activity"), at: try f.optional("at"),
                time: try f("time"))
        case "setLike":
            self = .setLike(post: try f("post"), user: try f("user"), liked: try f("liked"), time: try f("time"))
        case "addComment":
            self = .addComment(post: try f("post"), id: try f("id"), author: try f("author"), text: try f("text"), time: try f("time"))
        case "deletePost":
            self = .deletePost(post: try f("post"), author: try f("author"), time: try f("time"))
        case "setActivity":
            self = .setActivity(
                user: try f("user"), activity: try f("activity"), audience: try f.optional("audience"), expiresAt: try f("expiresAt"), time: try f("time"))
        case "clearActivity":
            self = .clearActivity(user: try f("user"), activity: try f("activity"), reason: try f("reason"), time: try f("time"))
        case "startMatch":
            self = .startMatch(user: try f("user"), partner: try f("partner"), activity: try f("activity"), time: try f("time"))
        case "endMatch":
            self = .endMatch(user: try f("user"), partner: try f("partner"), activity: try f("activity"), reason: try f("reason"), time: try f("time"))
        case "setPlace":
            self = .setPlace(user: try f("user"), place: try f("place"), time: try f("time"))
        case "removePlace":
            self = .removePlace(user: try f("user"), placeID: try f("placeID"), time: try f("time"))
        case "updateLocation":
            self = .updateLocation(user: try f("user"), location: try f("location"), time: try f("time"))
        case "createMemory":
            self = .createMemory(
                owner: try f("owner"), id: try f("id"), title: try f("title"), date: try f("date"), placeName: try f("placeName"),
                position: try f.optional("position"), time: try f("time"))
        case "updateMemory":
            self = .updateMemory(
                owner: try f("owner"), id: try f("id"), title: try f("title"), date: try f("date"), placeName: try f("placeName"),
                position: try f.optional("position"), time: try f("time"))
        case "deleteMemory":
            self = .deleteMemory(owner: try f("owner"), id: try f("id"), time: try f("time"))
        case "putMemoryPoint":
            self = .putMemoryPoint(owner: try f("owner"), memory: try f("memory"), point: try f("point"), time: try f("time"))
        case "deleteMemoryPoint":
            self = .deleteMemoryPoint(owner: try f("owner"), memory: try f("memory"), point: try f("point"), time: try f("time"))
        case "addPhotoOwner":
            self = .addPhotoOwner(owner: try f("owner"), hash: try f("hash"), size: try f("size"), time: try f("time"))
        case "keepResult":
            self = .keepResult(user: try f("user"), op: try f("op"), clientID: try f("clientID"), reply: try f("reply"), time: try f("time"))
        case "forgetKeptResults":
            self = .forgetKeptResults(before: try f("before"), time: try f("time"))
        // Identities.
        case "createIdentityAccount":
            self = .createIdentityAccount(username: try f("username"), email: try f("email"), identity: try f("identity"), time: try f("time"))
        case "linkIdentity":
            self = .linkIdentity(username: try f("username"), identity: try f("identity"), time: try f("time"))
        case "unlinkIdentity":
            self = .unlinkIdentity(username: try f("username"), issuer: try f("issuer"), subject: try f("subject"), time: try f("time"))
        case "spendNonce":
            self = .spendNonce(
                issuer: try f("issuer"), subject: try f.optional("subject"), nonce: try f("nonce"), expiresAt: try f("expiresAt"), time: try f("time"))
        // Profiles and sessions.
        case "setProfile":
            self = .setProfile(user: try f("user"), displayName: try f.optional("displayName"), avatar: try f.optional("avatar"), time: try f("time"))
        case "seeSession":
            self = .seeSession(username: try f("username"), tokenHash: try f("tokenHash"), time: try f("time"))
        // Passwords.
        case "setCredentials":
            self = .setCredentials(username: try f("username"), credentials: try f("credentials"), time: try f("time"))
        case "issuePasswordReset":
            self = .issuePasswordReset(username: try f("username"), codeHash: try f("codeHash"), expiresAt: try f("expiresAt"), time: try f("time"))
        case "failPasswordReset":
            self = .failPasswordReset(username: try f("username"), time: try f("time"))
        case "resetPassword":
            self = .resetPassword(username: try f("username"), credentials: try f("credentials"), time: try f("time"))
        // Blocking.
        case "block":
            self = .block(user: try f("user"), blocked: try f("blocked"), time: try f("time"))
        case "unblock":
            self = .unblock(user: try f("user"), blocked: try f("blocked"), time: try f("time"))
        // Moderation.
        case "suspend":
            self = .suspend(user: try f("user"), reason: try f("reason"), until: try f.optional("until"), time: try f("time"))
        case "unsuspend":
            self = .unsuspend(user: try f("user"), time: try f("time"))
        case "fileReport":
            self = .fileReport(try f("report"))
        case "resolveReport":
            self = .resolveReport(id: try f("id"), action: try f("action"), note: try f("note"), time: try f("time"))
        case "removePublication":
            self = .removePublication(channel: try f("channel"), offset: try f("offset"), time: try f("time"))
        case "eraseUser":
            self = .eraseUser(username: try f("username"), time: try f("time"))
        case "eraseChannels":
            self = .eraseChannels(username: try f("username"), channels: try f("channels"), time: try f("time"))
        case "finishErasure":
            self = .finishErasure(username: try f("username"), time: try f("time"))
        case "removeComment":
            self = .removeComment(post: try f("post"), comment: try f("comment"), time: try f("time"))
        default:
            throw variant.unknown()
        }
    }
}
