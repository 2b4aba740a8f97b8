/// A post as a reader sees it (protocol.md, "Feed"): its content, how many like it and whether
/// the reader does, how many comments it has and the newest few of them.
public struct FeedPost: Sendable, Equatable {
    public var id: UInt64
    public var author: Username
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
    /// The newest `Feed.inlineComments` comments, newest first.
    public var recentComments: [FeedComment]

    public init(
        id: UInt64, author: Username, text: String, activity: String?, at: Int64?, time: Int64, likes: Int, liked: Bool,
        comments: Int, recentComments: [FeedComment]
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
    }
}

/// A comment on a post. Ids count per post: 1, 2, 3, … in the order the comments were made.
public struct FeedComment: Sendable, Equatable {
    public var id: UInt64
    public var author: Username
    public var text: String
    public var time: Int64

    public init(id: UInt64, author: Username, text: String, time: Int64) {
        self.id = id
        self.author = author
        self.text = text
        self.time = time
    }
}
