/// A live change in the circle feed (protocol.md, "Events": `post`, `like`, `comment`,
/// `post_deleted`), told to every live connection of the post's author and the author's
/// friends — everyone who can see the post, the acting user's own connections included.
///
/// Live only: not a channel with offsets, so nothing replays them after a drop. A client that
/// was away reads the feed again with `feed` (and `comments`), then applies the events that
/// follow, matching posts by id.
public enum FeedEvent: Sendable, Equatable {
    /// A new post (its `liked` is false: nobody likes it yet).
    case posted(FeedPost)
    /// `user` liked (`liked`) or stopped liking `author`'s post; `likes` is its count now.
    case liked(post: UInt64, author: String, user: String, liked: Bool, likes: Int, time: Int64)
    /// A new comment on `author`'s post; `comments` is its count now.
    case commented(post: UInt64, author: String, comment: FeedComment, comments: Int)
    /// The author deleted the post.
    case deleted(post: UInt64, author: String, time: Int64)
    /// The operator removed comment `comment` from `author`'s post; `comments` is its count now.
    case commentRemoved(post: UInt64, author: String, comment: UInt64, comments: Int, time: Int64)

    /// The event names this enum reads.
    public static let names: Set<String> = ["post", "like", "comment", "post_deleted", "comment_removed"]

    /// The post the event is about.
    public var post: UInt64 {
        switch self {
        case .posted(let post): return post.id
        case .liked(let post, _, _, _, _, _), .commented(let post, _, _, _), .deleted(let post, _, _), .commentRemoved(let post, _, _, _, _):
            return post
        }
    }

    /// The event's message; encoded once by the server and fanned out to every viewer.
    public var event: JSONValue {
        switch self {
        case .posted(let post):
            return .object([("event", .string("post")), ("post", post.json), ("time", .integer(post.time))])
        case .liked(let post, let author, let user, let liked, let likes, let time):
            return .object([
                ("event", .string("like")), ("post", .integer(post)), ("author", .string(author)), ("user", .string(user)),
                ("liked", .bool(liked)), ("likes", .integer(likes)), ("time", .integer(time)),
            ])
        case .commented(let post, let author, let comment, let comments):
            return .object([
                ("event", .string("comment")), ("post", .integer(post)), ("author", .string(author)), ("comment", comment.json),
                ("comments", .integer(comments)), ("time", .integer(comment.time)),
            ])
        case .deleted(let post, let author, let time):
            return .object([("event", .string("post_deleted")), ("post", .integer(post)), ("author", .string(author)), ("time", .integer(time))])
        case .commentRemoved(let post, let author, let comment, let comments, let time):
            return .object([
                ("event", .string("comment_removed")), ("post", .integer(post)), ("author", .string(author)), ("comment", .integer(comment)),
                ("comments", .integer(comments)), ("time", .integer(time)),
            ])
        }
    }

    /// The feed event named `name` in `message`; nil for another event.
    public init?(name: String, event message: JSONValue) throws(WireFormatError) {
        switch name {
        case "post":
            self = .posted(try FeedPost(json: try message.requiredObject("post")))
        case "like":
            self = .liked(
                post: try message.requiredUInt64("post"), author: try message.requiredString("author"), user: try message.requiredString("user"),
                liked: try message.requiredBool("liked"), likes: try message.requiredInt("likes"), time: try message.requiredInt64("time"))
        case "comment":
            self = .commented(
                post: try message.requiredUInt64("post"), author: try message.requiredString("author"),
                comment: try FeedComment(json: try message.requiredObject("comment")), comments: try message.requiredInt("comments"))
        case "post_deleted":
            self = .deleted(post: try message.requiredUInt64("post"), author: try message.requiredString("author"), time: try message.requiredInt64("time"))
        case "comment_removed":
            self = .commentRemoved(
                post: try message.requiredUInt64("post"), author: try message.requiredString("author"), comment: try message.requiredUInt64("comment"),
                comments: try message.requiredInt("comments"), time: try message.requiredInt64("time"))
        default:
            return nil
        }
    }
}
