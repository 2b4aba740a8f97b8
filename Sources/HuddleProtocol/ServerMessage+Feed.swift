/// The feed's objects and events (protocol.md, "Feed" and "Events"), fields in the order
/// protocol.md shows them. A feed event is encoded once and fanned out to every viewer, so
/// building it through a `JSONValue` costs once per change, not per recipient.
extension ServerMessage {
    /// A post in a `post`, `feed` reply or `post` event.
    public static func feedPostObject(
        id: UInt64, author: String, text: String, activity: String?, at: Int64?, time: Int64, likes: Int, liked: Bool,
        comments: Int, recentComments: [JSONValue]
    ) -> JSONValue {
        .object([
            ("id", .integer(id)),
            ("author", .string(author)),
            ("text", .string(text)),
            ("activity", activity.map(JSONValue.string) ?? .null),
            ("at", at.map { JSONValue.integer($0) } ?? .null),
            ("time", .integer(time)),
            ("likes", .integer(likes)),
            ("liked", .bool(liked)),
            ("comments", .integer(comments)),
            ("recent_comments", .array(recentComments)),
        ])
    }

    /// A comment in a post's `recent_comments`, a `comment` or `comments` reply, a `comment` event.
    public static func feedCommentObject(id: UInt64, author: String, text: String, time: Int64) -> JSONValue {
        .object([("id", .integer(id)), ("author", .string(author)), ("text", .string(text)), ("time", .integer(time))])
    }

    /// `{"event":"post","post":{…},"time":…}`
    public static func postEvent(post: JSONValue, time: Int64) -> [UInt8] {
        event(.object([("event", .string("post")), ("post", post), ("time", .integer(time))]))
    }

    /// `{"event":"like","post":…,"author":…,"user":…,"liked":…,"likes":…,"time":…}`
    public static func likeEvent(post: UInt64, author: String, user: String, liked: Bool, likes: Int, time: Int64) -> [UInt8] {
        event(.object([
            ("event", .string("like")), ("post", .integer(post)), ("author", .string(author)), ("user", .string(user)),
            ("liked", .bool(liked)), ("likes", .integer(likes)), ("time", .integer(time)),
        ]))
    }

    /// `{"event":"comment","post":…,"author":…,"comment":{…},"comments":…,"time":…}`
    public static func commentEvent(post: UInt64, author: String, comment: JSONValue, comments: Int, time: Int64) -> [UInt8] {
        event(.object([
            ("event", .string("comment")), ("post", .integer(post)), ("author", .string(author)), ("comment", comment),
            ("comments", .integer(comments)), ("time", .integer(time)),
        ]))
    }

    /// `{"event":"post_deleted","post":…,"author":…,"time":…}`
    public static func postDeletedEvent(post: UInt64, author: String, time: Int64) -> [UInt8] {
        event(.object([("event", .string("post_deleted")), ("post", .integer(post)), ("author", .string(author)), ("time", .integer(time))]))
    }

    private static func event(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        JSONWriter.append(value, to: &output)
        return output
    }
}
