import HuddleProtocol

// The small values inside commands, kept results and the state, field by field.

extension Credentials: PersistedValue {
    var persisted: JSONValue { .record([("salt", salt.persisted), ("hash", hash.persisted), ("iterations", iterations.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Credentials")
        self.init(salt: try f("salt"), hash: try f("hash"), iterations: try f("iterations"))
    }
}

extension NewSession: PersistedValue {
    var persisted: JSONValue { .record([("tokenHash", tokenHash.persisted), ("expiresAt", expiresAt.persisted), ("device", device?.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "NewSession")
        self.init(tokenHash: try f("tokenHash"), expiresAt: try f("expiresAt"), device: try f.optional("device"))
    }
}

extension SessionRecord: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("tokenHash", tokenHash.persisted), ("username", username.persisted), ("expiresAt", expiresAt.persisted), ("device", device?.persisted),
            ("createdAt", createdAt.persisted), ("lastSeenAt", lastSeenAt == createdAt ? nil : lastSeenAt.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "SessionRecord")
        self.init(
            tokenHash: try f("tokenHash"), username: try f("username"), expiresAt: try f("expiresAt"), device: try f.optional("device"),
            createdAt: try f("createdAt"), lastSeenAt: try f.optional("lastSeenAt"))
    }
}

extension UserRecord: PersistedValue {
    var persisted: JSONValue {
        .record([("username", username.persisted), ("email", email.persisted), ("credentials", credentials?.persisted), ("createdAt", createdAt.persisted)])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "UserRecord")
        self.init(username: try f("username"), email: try f("email"), credentials: try f.optional("credentials"), createdAt: try f("createdAt"))
    }
}

extension UserInfo: PersistedValue {
    var persisted: JSONValue { .record([("username", username.persisted), ("email", email.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "UserInfo")
        self.init(username: try f("username"), email: try f("email"))
    }
}

extension CoreError: PersistedValue {
    var persisted: JSONValue {
        .record([("code", code.rawValue.persisted), ("message", message.persisted), ("retryAfterMilliseconds", retryAfterMilliseconds?.persisted)])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "CoreError")
        let name: String = try f("code")
        guard let code = CoreErrorCode(rawValue: name) else { throw RecordDecodingError("CoreError has no code \(name)") }
        self.init(code, try f("message"), retryAfterMilliseconds: try f.optional("retryAfterMilliseconds"))
    }
}

extension ActivityEndReason: PersistedValue {
    var persisted: JSONValue { .string(rawValue) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let name = try String(persisted: persisted)
        guard let reason = ActivityEndReason(rawValue: name) else { throw RecordDecodingError("no activity end reason \(name)") }
        self = reason
    }
}

extension Publication: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("channel", channel.persisted), ("epoch", epoch.persisted), ("offset", offset.persisted), ("type", type.persisted), ("from", from?.persisted),
            ("data", data.persisted), ("time", time.persisted), ("clientID", clientID?.persisted), ("removed", removed ? true.persisted : nil),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Publication")
        self.init(
            channel: try f("channel"), epoch: try f("epoch"), offset: try f("offset"), type: try f("type"), from: try f.optional("from"),
            data: try f("data"), time: try f("time"), clientID: try f.optional("clientID"), removed: try f.optional("removed") ?? false)
    }
}

extension RetainedPublication: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("type", type.persisted), ("from", from?.persisted), ("data", data.persisted), ("time", time.persisted), ("clientID", clientID?.persisted),
            ("removed", removed ? true.persisted : nil),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "RetainedPublication")
        self.init(
            type: try f("type"), from: try f.optional("from"), data: try f("data"), time: try f("time"), clientID: try f.optional("clientID"),
            removed: try f.optional("removed") ?? false)
    }
}

extension FriendRequest: PersistedValue {
    var persisted: JSONValue { .record([("from", from.persisted), ("to", to.persisted), ("message", message.persisted), ("time", time.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "FriendRequest")
        self.init(from: try f("from"), to: try f("to"), message: try f("message"), time: try f("time"))
    }
}

extension FriendStatus: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("username", username.persisted), ("online", online.persisted), ("displayName", profile.displayName?.persisted),
            ("avatar", profile.avatar?.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "FriendStatus")
        self.init(
            username: try f("username"), online: try f("online"),
            profile: UserProfile(displayName: try f.optional("displayName"), avatar: try f.optional("avatar")))
    }
}

extension RoomUnread: PersistedValue {
    var persisted: JSONValue {
        .record([("channel", channel.persisted), ("offset", offset.persisted), ("read", read.persisted), ("unread", unread.persisted)])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "RoomUnread")
        self.init(channel: try f("channel"), offset: try f("offset"), read: try f("read"), unread: try f("unread"))
    }
}

extension FeedComment: PersistedValue {
    /// The author's profile only in a kept reply (a stored comment has none: it is added when shown).
    var persisted: JSONValue {
        .record([
            ("id", id.persisted), ("author", author.persisted), ("text", text.persisted), ("time", time.persisted),
            ("authorDisplayName", authorProfile.displayName?.persisted), ("authorAvatar", authorProfile.avatar?.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "FeedComment")
        self.init(
            id: try f("id"), author: try f("author"), text: try f("text"), time: try f("time"),
            authorProfile: UserProfile(displayName: try f.optional("authorDisplayName"), avatar: try f.optional("authorAvatar")))
    }
}

extension FeedPost: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("id", id.persisted), ("author", author.persisted), ("text", text.persisted), ("activity", activity?.persisted), ("at", at?.persisted),
            ("time", time.persisted), ("likes", likes.persisted), ("liked", liked.persisted), ("comments", comments.persisted),
            ("recentComments", recentComments.persisted), ("authorDisplayName", authorProfile.displayName?.persisted),
            ("authorAvatar", authorProfile.avatar?.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "FeedPost")
        self.init(
            id: try f("id"), author: try f("author"), text: try f("text"), activity: try f.optional("activity"), at: try f.optional("at"),
            time: try f("time"), likes: try f("likes"), liked: try f("liked"), comments: try f("comments"), recentComments: try f("recentComments"),
            authorProfile: UserProfile(displayName: try f.optional("authorDisplayName"), avatar: try f.optional("authorAvatar")))
    }
}

extension ActivityStatus: PersistedValue {
    var persisted: JSONValue {
        .record([("activity", activity.persisted), ("audience", audience?.persisted), ("since", since.persisted), ("expiresAt", expiresAt.persisted)])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "ActivityStatus")
        self.init(activity: try f("activity"), audience: try f.optional("audience"), since: try f("since"), expiresAt: try f("expiresAt"))
    }
}

extension ActivityMatch: PersistedValue {
    var persisted: JSONValue { .record([("user", user.persisted), ("activity", activity.persisted), ("since", since.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "ActivityMatch")
        self.init(user: try f("user"), activity: try f("activity"), since: try f("since"))
    }
}

extension KeptResult: PersistedValue {
    var persisted: JSONValue { .record([("op", op.persisted), ("clientID", clientID.persisted), ("reply", reply.persisted), ("time", time.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "KeptResult")
        self.init(op: try f("op"), clientID: try f("clientID"), reply: try f("reply"), time: try f("time"))
    }
}

extension SessionEntry: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("id", id.persisted), ("device", device?.persisted), ("createdAt", createdAt.persisted), ("lastSeenAt", lastSeenAt.persisted),
            ("expiresAt", expiresAt.persisted), ("connected", connected.persisted), ("current", current.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "SessionEntry")
        self.init(
            id: try f("id"), device: try f.optional("device"), createdAt: try f("createdAt"), lastSeenAt: try f("lastSeenAt"),
            expiresAt: try f("expiresAt"), connected: try f("connected"), current: try f("current"))
    }
}
