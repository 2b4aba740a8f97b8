/// A page of `feed`: the caller's and their friends' posts, newest first.
public struct FeedPage: Sendable, Equatable {
    public var posts: [FeedPost]
    /// The `before` of the next (older) page; nil on the last page.
    public var nextBefore: UInt64?

    public init(posts: [FeedPost], nextBefore: UInt64?) {
        self.posts = posts
        self.nextBefore = nextBefore
    }

    public var result: JSONValue {
        .object([("posts", .array(posts.map(\.json))), ("next_before", nextBefore.map { JSONValue.integer($0) } ?? .null)])
    }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(posts: try result.requiredList("posts", FeedPost.init(json:)), nextBefore: try result.optionalUInt64("next_before"))
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

    public var result: JSONValue {
        .object([
            ("post", .integer(post)), ("comments", .array(comments.map(\.json))),
            ("next_before", nextBefore.map { JSONValue.integer($0) } ?? .null),
        ])
    }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(
            post: try result.requiredUInt64("post"), comments: try result.requiredList("comments", FeedComment.init(json:)),
            nextBefore: try result.optionalUInt64("next_before"))
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

    public var result: JSONValue { .object([("post", .integer(post)), ("liked", .bool(liked)), ("likes", .integer(likes))]) }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(post: try result.requiredUInt64("post"), liked: try result.requiredBool("liked"), likes: try result.requiredInt("likes"))
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

    public var result: JSONValue { .object([("post", .integer(post)), ("comment", comment.json), ("comments", .integer(comments))]) }

    public init(result: JSONValue) throws(WireFormatError) {
        self.init(
            post: try result.requiredUInt64("post"), comment: try FeedComment(json: try result.requiredObject("comment")),
            comments: try result.requiredInt("comments"))
    }
}
