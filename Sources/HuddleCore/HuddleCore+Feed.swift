import HuddleProtocol

/// The circle feed: posts, the feed of one's own and one's friends' posts, likes, comments and
/// deleting a post (protocol.md, "Feed").
///
/// A post is visible to its author and the author's friends *now*: a post of someone who is no
/// longer a friend disappears from the feed, and liking, commenting on or reading it is
/// `post_not_found`, exactly as for a post that does not exist — its existence is not leaked.
/// Every change is told live, as a `FeedEvent`, to everyone who can see the post; clients that
/// were offline read the state with `feed` instead of replaying a stream.
extension HuddleCore {
    func createPost(
        _ connection: ConnectionRef, requestID: String, text: String, activity: String?, plannedAt: Int64?, at time: Int64,
        into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let author = identity.username
        let id = durableState.feed.lastPostID + 1
        let command = CoreCommand.createPost(id: id, author: author, text: text, activity: activity, at: plannedAt, time: time)
        record(command, into: &step)
        reply(connection, requestID, .feedPost(shown(durableState.feed[id]!.view(for: author))), into: &step)
        tellLive(after: command, at: time, into: &step)
    }

    func listFeed(_ connection: ConnectionRef, requestID: String, before: UInt64?, limit: Int, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let reader = identity.username
        var authors = friends(of: reader)
        authors.insert(reader)
        let page = durableState.feed.page(of: authors, before: before, limit: Self.pageSize(limit))
        let blocks = durableState.blocks
        let posts = page.posts.map { shown($0.view(for: reader) { blocks.eitherBlocks(reader, $0) }) }
        reply(connection, requestID, .feedPage(posts: posts, nextBefore: page.nextBefore), into: &step)
    }

    func likePost(_ connection: ConnectionRef, requestID: String, post id: UInt64, liked: Bool?, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let post = visiblePost(id, to: identity.username, connection, requestID, into: &step)
        else { return }
        let user = identity.username
        let likes = post.likers.contains(user)
        if let liked, liked == likes {
            // A like counts once: asking for the state it is in already changes nothing.
            let error = liked
                ? CoreError(.alreadyLiked, "you like post \(id) already")
                : CoreError(.notLiked, "you do not like post \(id)")
            return fail(connection, requestID, error, into: &step)
        }
        let command = CoreCommand.setLike(post: id, user: user, liked: !likes, time: time)
        record(command, into: &step)
        reply(connection, requestID, .postLike(post: id, liked: !likes, likes: durableState.feed[id]!.likers.count), into: &step)
        tellLive(after: command, at: time, into: &step)
    }

    func commentOnPost(_ connection: ConnectionRef, requestID: String, post id: UInt64, text: String, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let post = visiblePost(id, to: identity.username, connection, requestID, into: &step)
        else { return }
        let comment = FeedComment(id: post.lastCommentID + 1, author: identity.username, text: text, time: time)
        let command = CoreCommand.addComment(post: id, id: comment.id, author: comment.author, text: text, time: time)
        record(command, into: &step)
        reply(connection, requestID, .postComment(post: id, comment: shown(comment), comments: durableState.feed[id]!.comments.count), into: &step)
        tellLive(after: command, at: time, into: &step)
    }

    func listComments(
        _ connection: ConnectionRef, requestID: String, post id: UInt64, before: UInt64?, limit: Int, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let post = visiblePost(id, to: identity.username, connection, requestID, into: &step)
        else { return }
        let page = post.comments(before: before, limit: Self.pageSize(limit))
        // Comments of users blocked either way are left out; the page may come out shorter,
        // and `nextBefore` still pages on.
        let blocks = durableState.blocks
        let visible = page.comments.filter { !blocks.eitherBlocks(identity.username, $0.author) }
        reply(connection, requestID, .postComments(post: id, comments: visible.map(shown), nextBefore: page.nextBefore), into: &step)
    }

    func deletePost(_ connection: ConnectionRef, requestID: String, post id: UInt64, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let post = visiblePost(id, to: identity.username, connection, requestID, into: &step)
        else { return }
        guard post.author == identity.username else {
            return fail(connection, requestID, CoreError(.forbidden, "only its author may delete post \(id)"), into: &step)
        }
        let command = CoreCommand.deletePost(post: id, author: post.author, time: time)
        record(command, into: &step)
        reply(connection, requestID, .done, into: &step)
        tellLive(after: command, at: time, into: &step)
    }

    /// The post if it exists and `reader` may see it (its author, or a friend of its author);
    /// otherwise nil, having replied `post_not_found` — the same either way.
    private func visiblePost(
        _ id: UInt64, to reader: Username, _ connection: ConnectionRef, _ requestID: String, into step: inout CoreStep
    ) -> StoredPost? {
        guard let post = durableState.feed[id],
              post.author == reader || durableState.friendships.areFriends(post.author, reader)
        else {
            fail(connection, requestID, CoreError(.postNotFound, "no post \(id) in your feed"), into: &step)
            return nil
        }
        return post
    }

    private static func pageSize(_ limit: Int) -> Int {
        min(max(limit, 1), Feed.maxPageSize)
    }
}
