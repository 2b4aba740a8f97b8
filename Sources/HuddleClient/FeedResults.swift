import HuddleProtocol

/// A post of the circle feed (protocol.md, "Feed"), as `feed`, `post` and the `post` event give it.
public struct FeedPost: Sendable, Equatable {
    /// Server-wide and increasing: a newer post has a higher id.
    public var id: UInt64
    public var author: String
    public var text: String
    /// An activity label the author gave ("Coffee"), if any.
    public var activity: String?
    /// When the activity is planned for, in milliseconds since the Unix epoch.
    public var at: Int64?
    /// When it was posted.
    public var time: Int64
    public var likes: Int
    /// Whether the caller likes it (always false in a `post` event: nobody does yet).
    public var liked: Bool
    public var comments: Int
    /// The newest five comments, newest first.
    public var recentComments: [FeedComment]

    public init(
        id: UInt64, author: String, text: String, activity: String? = nil, at: Int64? = nil, time: Int64, likes: Int = 0,
        liked: Bool = false, comments: Int = 0, recentComments: [FeedComment] = []
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

    static func decode(_ object: JSONValue) throws(HuddleClientError) -> FeedPost {
        var recent: [FeedComment] = []
        for comment in try object.requiredArray("recent_comments") { recent.append(try FeedComment.decode(comment)) }
        return FeedPost(
            id: try object.requiredUInt64("id"), author: try object.requiredString("author"), text: try object.requiredString("text"),
            activity: try object.optionalString("activity"), at: try object.optionalInt64("at"), time: try object.requiredInt64("time"),
            likes: try object.requiredInt("likes"), liked: try object.requiredBool("liked"), comments: try object.requiredInt("comments"),
            recentComments: recent)
    }
}

/// A comment on a post; ids count 1, 2, 3… per post.
public struct FeedComment: Sendable, Equatable {
    public var id: UInt64
    public var author: String
    public var text: String
    public var time: Int64

    public init(id: UInt64, author: String, text: String, time: Int64) {
        self.id = id
        self.author = author
        self.text = text
        self.time = time
    }

    static func decode(_ object: JSONValue) throws(HuddleClientError) -> FeedComment {
        FeedComment(
            id: try object.requiredUInt64("id"), author: try object.requiredString("author"), text: try object.requiredString("text"),
            time: try object.requiredInt64("time"))
    }
}

/// A page of `feed`: the caller's and their friends' posts, newest first.
public struct FeedPage: Sendable, Equatable {
    public var posts: [FeedPost]
    /// The `before` of the next (older) page; nil on the last page.
    public var nextBefore: UInt64?

    public init(posts: [FeedPost], nextBefore: UInt64?) {
        self.posts = posts
        self.nextBefore = nextBefore
    }

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> FeedPage {
        var posts: [FeedPost] = []
        for object in try result.requiredArray("posts") { posts.append(try FeedPost.decode(object)) }
        return FeedPage(posts: posts, nextBefore: try result.optionalUInt64("next_before"))
    }
}

/// A page of `comments`: one post's comments, newest first.
public struct CommentPage: Sendable, Equatable {
    public var post: UInt64
    public var comments: [FeedComment]
    /// The `before` of the next (older) page; nil on the last page.
    public var nextBefore: UInt64?

    public init(post: UInt64, comments: [FeedComment], nextBefore: UInt64?) {
        self.post = post
        self.comments = comments
        self.nextBefore = nextBefore
    }

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> CommentPage {
        var comments: [FeedComment] = []
        for object in try result.requiredArray("comments") { comments.append(try FeedComment.decode(object)) }
        return CommentPage(post: try result.requiredUInt64("post"), comments: comments, nextBefore: try result.optionalUInt64("next_before"))
    }
}

/// The result of `like`: whether the caller likes the post now, and its count.
public struct PostLike: Sendable, Equatable {
    public var post: UInt64
    public var liked: Bool
    public var likes: Int

    public init(post: UInt64, liked: Bool, likes: Int) {
        self.post = post
        self.liked = liked
        self.likes = likes
    }

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> PostLike {
        PostLike(post: try result.requiredUInt64("post"), liked: try result.requiredBool("liked"), likes: try result.requiredInt("likes"))
    }
}

/// The result of `comment`: the new comment and the post's comment count.
public struct PostComment: Sendable, Equatable {
    public var post: UInt64
    public var comment: FeedComment
    public var comments: Int

    public init(post: UInt64, comment: FeedComment, comments: Int) {
        self.post = post
        self.comment = comment
        self.comments = comments
    }

    static func decode(_ result: JSONValue) throws(HuddleClientError) -> PostComment {
        PostComment(
            post: try result.requiredUInt64("post"), comment: try FeedComment.decode(try result.requiredObject("comment")),
            comments: try result.requiredInt("comments"))
    }
}
