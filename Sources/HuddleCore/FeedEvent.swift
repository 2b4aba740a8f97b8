/// A live change in the circle feed, told to every live connection of the post's author and of
/// the author's friends — everyone who can see the post (protocol.md, "Events"). Ephemeral:
/// a client that was offline catches up with the `feed` op, which reads the state.
public enum FeedEvent: Sendable, Equatable {
    /// A new post (nobody likes it or has commented yet, so it reads the same for everyone).
    case posted(FeedPost)
    /// `user` liked the post (`liked`) or took the like back; `likes` is the count now.
    case liked(post: UInt64, author: Username, user: Username, liked: Bool, likes: Int, time: Int64)
    /// A new comment; `comments` is the post's comment count now.
    case commented(post: UInt64, author: Username, comment: FeedComment, comments: Int)
    /// The author deleted the post.
    case deleted(post: UInt64, author: Username, time: Int64)
}
