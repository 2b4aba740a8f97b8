import HuddleProtocol

/// protocol.md "Feed": posts of the caller and their friends, likes, comments.
///
/// Live changes arrive as `HuddleEvent.feed` once signed in, with nothing to subscribe to. They
/// are live only: after a reconnect (`HuddleEvent.connected` with `resumed`) read the feed
/// again, as the events sent meanwhile are not replayed. Reads are resent after a dropped
/// connection; writes wait in the outbox with a `client_id` and are resent until answered, so
/// a post, a comment or a like toggle is done once whatever the connection does.
extension HuddleClient {
    /// `post`: a new post; `activity` labels it ("Coffee"), `at` is when that is planned for
    /// (ms since the Unix epoch). Its viewers, the caller's connections included, get a
    /// `FeedEvent.posted`.
    public func post(text: String, activity: String? = nil, at: Int64? = nil, completion: @escaping (Result<FeedPost, HuddleClientError>) -> Void) {
        request(.post(text: text, activity: activity, at: at), reading: ReplyResult.post(in:), completion: completion)
    }

    /// `feed`: a page of posts, newest first; pass a page's `nextBefore` as `before` for the next.
    public func feed(before: UInt64? = nil, limit: Int? = nil, completion: @escaping (Result<FeedPage, HuddleClientError>) -> Void) {
        request(.feed(before: before, limit: limit ?? ProtocolLimits().defaultFeedLimit), resendAfterReconnect: true, reading: FeedPage.init(result:), completion: completion)
    }

    /// `like`: with `liked` nil, a toggle; with `true` or `false`, sets the state, and finding
    /// it so already is `already_liked` or `not_liked`. Resent after a drop with its client id,
    /// a toggle is applied once (the retry answers the first result).
    public func like(post: UInt64, liked: Bool? = nil, completion: @escaping (Result<PostLike, HuddleClientError>) -> Void) {
        request(.like(post: post, liked: liked), reading: PostLike.init(result:), completion: completion)
    }

    /// `comment`: a new comment on `post`.
    public func comment(on post: UInt64, text: String, completion: @escaping (Result<PostComment, HuddleClientError>) -> Void) {
        request(.comment(post: post, text: text), reading: PostComment.init(result:), completion: completion)
    }

    /// `comments`: a page of `post`'s comments, newest first.
    public func comments(
        on post: UInt64, before: UInt64? = nil, limit: Int? = nil, completion: @escaping (Result<CommentPage, HuddleClientError>) -> Void
    ) {
        request(.comments(post: post, before: before, limit: limit ?? ProtocolLimits().defaultFeedLimit), resendAfterReconnect: true, reading: CommentPage.init(result:), completion: completion)
    }

    /// `post_delete`: the caller's post is gone for everyone, with its likes and comments.
    public func deletePost(_ post: UInt64, completion: @escaping (Result<Void, HuddleClientError>) -> Void) {
        request(.postDelete(post: post), decode: { _ throws(HuddleClientError) in () }, completion: completion)
    }
}
