import HuddleProtocol

/// A live change in the circle feed (protocol.md, "Events": `post`, `like`, `comment`,
/// `post_deleted`), sent to every live connection of the post's author and the author's
/// friends — the acting user's own included, so their other devices follow.
///
/// These are live only: not a channel with offsets, so nothing replays them after a drop.
/// When `HuddleEvent.connected` says `resumed`, some may have been missed: read the feed again
/// with `feed` (and `comments`), then apply the events that follow, matching posts by id.
public enum FeedEvent: Sendable, Equatable {
    /// A new post (its `liked` is false: nobody likes it yet).
    case posted(FeedPost)
    /// `user` liked (`liked`) or stopped liking `author`'s post; `likes` is its count now.
    case liked(post: UInt64, author: String, user: String, liked: Bool, likes: Int, time: Int64)
    /// A new comment on `author`'s post; `comments` is its count now.
    case commented(post: UInt64, author: String, comment: FeedComment, comments: Int)
    /// The author deleted the post: drop it.
    case deleted(post: UInt64, author: String, time: Int64)

    /// The post the event is about.
    public var post: UInt64 {
        switch self {
        case .posted(let post): return post.id
        case .liked(let post, _, _, _, _, _), .commented(let post, _, _, _), .deleted(let post, _, _): return post
        }
    }

    /// The feed event named `name` in `message`; nil for another event, or a feed event of
    /// the wrong shape.
    init?(name: String, _ message: JSONValue) {
        do throws(HuddleClientError) {
            switch name {
            case "post":
                self = .posted(try FeedPost.decode(try message.requiredObject("post")))
            case "like":
                self = .liked(
                    post: try message.requiredUInt64("post"), author: try message.requiredString("author"),
                    user: try message.requiredString("user"), liked: try message.requiredBool("liked"),
                    likes: try message.requiredInt("likes"), time: try message.requiredInt64("time"))
            case "comment":
                self = .commented(
                    post: try message.requiredUInt64("post"), author: try message.requiredString("author"),
                    comment: try FeedComment.decode(try message.requiredObject("comment")), comments: try message.requiredInt("comments"))
            case "post_deleted":
                self = .deleted(post: try message.requiredUInt64("post"), author: try message.requiredString("author"), time: try message.requiredInt64("time"))
            default:
                return nil
            }
        } catch {
            return nil
        }
    }
}
