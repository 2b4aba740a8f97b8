/// A post as a reader sees it (protocol.md, "Feed"): its content, how many like it and whether
/// the reader does, how many comments it has and the newest few of them.
///
public struct FeedPost: Sendable, Equatable {
    /// Server-wide and increasing: a newer post has a higher id.
    public var id: UInt64
    public var author: String
    public var text: String
    /// What the author is up to, a free label (e.g. an activity's name); nil when not given.
    public var activity: String?
    /// When the activity is planned for, milliseconds since the Unix epoch; nil when not given.
    public var at: Int64?
    /// When the post was made.
    public var time: Int64
    public var likes: Int
    /// Whether the reader likes it; always false in the live `post` event (nobody has yet).
    public var liked: Bool
    public var comments: Int
    /// The newest few comments, newest first.
    public var recentComments: [FeedComment]
    /// The author's profile as it is when the post is shown (`author_display_name`, `author_avatar`).
    public var authorProfile: UserProfile

    public init(
        id: UInt64, author: String, text: String, activity: String? = nil, at: Int64? = nil, time: Int64, likes: Int = 0,
        liked: Bool = false, comments: Int = 0, recentComments: [FeedComment] = [], authorProfile: UserProfile = UserProfile()
    ) {
        self.id = id
        self.author = author
        self.text = text
        self.activity = activity
        self.at = at
        self.time = time
        self.likes = likes
        self.liked = liked
        self.comments = comments
        self.recentComments = recentComments
        self.authorProfile = authorProfile
    }

    /// Fields in the order protocol.md shows them.
    public var json: JSONValue {
        .object([
            ("id", .integer(id)),
            ("author", .string(author)),
        ] + authorProfile.members(prefix: "author_") + [
            ("text", .string(text)),
            ("activity", activity.map(JSONValue.string) ?? .null),
            ("at", at.map { JSONValue.integer($0) } ?? .null),
            ("time", .integer(time)),
            ("likes", .integer(likes)),
            ("liked", .bool(liked)),
            ("comments", .integer(comments)),
            ("recent_comments", .array(recentComments.map(\.json))),
        ])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(
            id: try json.requiredUInt64("id"), author: try json.requiredString("author"), text: try json.requiredString("text"),
            activity: try json.optionalString("activity"), at: try json.optionalInt64("at"), time: try json.requiredInt64("time"),
            likes: try json.requiredInt("likes"), liked: try json.requiredBool("liked"), comments: try json.requiredInt("comments"),
            recentComments: try json.requiredList("recent_comments", FeedComment.init(json:)),
            authorProfile: try UserProfile(in: json, prefix: "author_"))
    }
}

/// A comment on a post. Ids count per post: 1, 2, 3, … in the order the comments were made.
public struct FeedComment: Sendable, Equatable {
    public var id: UInt64
    public var author: String
    public var text: String
    public var time: Int64
    /// The author's profile as it is when the comment is shown; never stored with the comment.
    public var authorProfile: UserProfile

    public init(id: UInt64, author: String, text: String, time: Int64, authorProfile: UserProfile = UserProfile()) {
        self.id = id
        self.author = author
        self.text = text
        self.time = time
        self.authorProfile = authorProfile
    }

    public var json: JSONValue {
        .object(
            [("id", .integer(id)), ("author", .string(author))] + authorProfile.members(prefix: "author_")
                + [("text", .string(text)), ("time", .integer(time))])
    }

    public init(json: JSONValue) throws(WireFormatError) {
        self.init(
            id: try json.requiredUInt64("id"), author: try json.requiredString("author"), text: try json.requiredString("text"),
            time: try json.requiredInt64("time"), authorProfile: try UserProfile(in: json, prefix: "author_"))
    }
}
