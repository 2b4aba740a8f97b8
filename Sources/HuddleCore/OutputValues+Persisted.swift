import HuddleProtocol

// The values only outputs carry, field by field (`CoreOutput.encoded()`).

extension ConnectionRef: PersistedValue {
    var persisted: JSONValue { .record([("loop", loop.persisted), ("serial", serial.persisted)]) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "ConnectionRef")
        self.init(loop: try f("loop"), serial: try f("serial"))
    }
}

extension PushKind: PersistedValue {
    var persisted: JSONValue { .string(rawValue) }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        self.init(rawValue: try String(persisted: persisted))
    }
}

extension PushBody: PersistedValue {
    var persisted: JSONValue {
        switch self {
        case .text(let text): .variant("text", [("_0", text.persisted)])
        case .messageData(let data): .variant("messageData", [("_0", data.persisted)])
        }
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let variant = try PersistedVariant(persisted, "PushBody")
        switch variant.name {
        case "text": self = .text(try variant.fields("_0"))
        case "messageData": self = .messageData(try variant.fields("_0"))
        default: throw variant.unknown()
        }
    }
}

extension PushNotification: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("user", user.persisted), ("kind", kind.persisted), ("title", title.persisted), ("body", body.persisted), ("badge", badge.persisted),
            ("target", target.persisted), ("id", id.persisted), ("from", from.persisted), ("time", time.persisted),
        ])
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "PushNotification")
        self.init(
            user: try f("user"), kind: try f("kind"), title: try f("title"), body: try f("body"), badge: try f("badge"), target: try f("target"),
            id: try f("id"), from: try f("from"), time: try f("time"))
    }
}

extension PhotoAccess: PersistedValue {
    var persisted: JSONValue {
        switch self {
        case .uploadAllowed(let user): .variant("uploadAllowed", [("user", user.persisted)])
        case .stored(let hash, let size, let newlyOwned):
            .variant("stored", [("hash", hash.persisted), ("size", size.persisted), ("newlyOwned", newlyOwned.persisted)])
        case .readAllowed(let hash, let size): .variant("readAllowed", [("hash", hash.persisted), ("size", size.persisted)])
        case .exportAllowed(let user, let document): .variant("exportAllowed", [("user", user.persisted), ("document", document)])
        case .refused(let error): .variant("refused", [("_0", error.persisted)])
        }
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let variant = try PersistedVariant(persisted, "PhotoAccess")
        let f = variant.fields
        switch variant.name {
        case "uploadAllowed": self = .uploadAllowed(user: try f("user"))
        case "stored": self = .stored(hash: try f("hash"), size: try f("size"), newlyOwned: try f("newlyOwned"))
        case "readAllowed": self = .readAllowed(hash: try f("hash"), size: try f("size"))
        case "exportAllowed":
            guard let document = f.member("document") else { throw RecordDecodingError("exportAllowed without its document") }
            self = .exportAllowed(user: try f("user"), document: document)
        case "refused": self = .refused(try f("_0"))
        default: throw variant.unknown()
        }
    }
}

extension FeedEvent: PersistedValue {
    var persisted: JSONValue {
        switch self {
        case .posted(let post): .variant("posted", [("_0", post.persisted)])
        case .liked(let post, let author, let user, let liked, let likes, let time):
            .variant("liked", [
                ("post", post.persisted), ("author", author.persisted), ("user", user.persisted), ("liked", liked.persisted),
                ("likes", likes.persisted), ("time", time.persisted),
            ])
        case .commented(let post, let author, let comment, let comments):
            .variant("commented", [("post", post.persisted), ("author", author.persisted), ("comment", comment.persisted), ("comments", comments.persisted)])
        case .deleted(let post, let author, let time):
            .variant("deleted", [("post", post.persisted), ("author", author.persisted), ("time", time.persisted)])
        case .commentRemoved(let post, let author, let comment, let comments, let time):
            .variant("commentRemoved", [
                ("post", post.persisted), ("author", author.persisted), ("comment", comment.persisted), ("comments", comments.persisted),
                ("time", time.persisted),
            ])
        }
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let variant = try PersistedVariant(persisted, "FeedEvent")
        let f = variant.fields
        switch variant.name {
        case "posted": self = .posted(try f("_0"))
        case "liked":
            self = .liked(post: try f("post"), author: try f("author"), user: try f("user"), liked: try f("liked"), likes: try f("likes"), time: try f("time"))
        case "commented": self = .commented(post: try f("post"), author: try f("author"), comment: try f("comment"), comments: try f("comments"))
        case "deleted": self = .deleted(post: try f("post"), author: try f("author"), time: try f("time"))
        case "commentRemoved":
            self = .commentRemoved(post: try f("post"), author: try f("author"), comment: try f("comment"), comments: try f("comments"), time: try f("time"))
        default: throw variant.unknown()
        }
    }
}

/// A memory as its owner is shown it travels as its wire object (`Memory.json`): the core keeps
/// `StoredMemory`, never this, so there is no other encoding of it to agree with.
extension Memory: PersistedValue {
    var persisted: JSONValue { json }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        do {
            try self.init(json: persisted)
        } catch {
            throw RecordDecodingError("Memory: \(error)")
        }
    }
}

extension MemoryChange: PersistedValue {
    var persisted: JSONValue {
        switch self {
        case .created(let memory): .variant("created", [("_0", memory.persisted)])
        case .updated(let memory): .variant("updated", [("_0", memory.persisted)])
        case .deleted(let memory): .variant("deleted", [("memory", memory.persisted)])
        case .pointAdded(let memory, let point): .variant("pointAdded", [("_0", memory.persisted), ("_1", point.persisted)])
        case .pointUpdated(let memory, let point): .variant("pointUpdated", [("_0", memory.persisted), ("_1", point.persisted)])
        case .pointDeleted(let memory, let point): .variant("pointDeleted", [("_0", memory.persisted), ("point", point.persisted)])
        }
    }
    init(persisted: JSONValue) throws(RecordDecodingError) {
        let variant = try PersistedVariant(persisted, "MemoryChange")
        let f = variant.fields
        switch variant.name {
        case "created": self = .created(try f("_0"))
        case "updated": self = .updated(try f("_0"))
        case "deleted": self = .deleted(memory: try f("memory"))
        case "pointAdded": self = .pointAdded(try f("_0"), try f("_1"))
        case "pointUpdated": self = .pointUpdated(try f("_0"), try f("_1"))
        case "pointDeleted": self = .pointDeleted(try f("_0"), point: try f("point"))
        default: throw variant.unknown()
        }
    }
}
