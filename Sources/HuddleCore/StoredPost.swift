import HuddleProtocol

/// One post as the durable state keeps it: its content, who likes it and its comments.
///
/// Likes are a set of usernames, so a user's like counts once however often it is sent.
/// Comments are kept oldest first with ids from the post's own counter; beyond
/// `Feed.maxCommentsPerPost` the oldest are dropped (the counter never goes back, so ids are
/// never reused).
public struct StoredPost: Sendable, Equatable {
    public internal(set) var id: UInt64
    public internal(set) var author: Username
    public internal(set) var text: String
    public internal(set) var activity: String?
    public internal(set) var at: Int64?
    public internal(set) var time: Int64
    public internal(set) var likers: Set<Username> = []
    /// Oldest first: ascending ids.
    public internal(set) var comments: [FeedComment] = []
    /// The id of the newest comment ever made on the post (0: none), kept or dropped.
    public internal(set) var lastCommentID: UInt64 = 0

    init(id: UInt64, author: Username, text: String, activity: String?, at: Int64?, time: Int64) {
        self.id = id
        self.author = author
        self.text = text
        self.activity = activity
        self.at = at
        self.time = time
    }

    /// The post as `reader` sees it: without the comments of the users `isHidden` (blocked
    /// either way). The counts stay everyone's: they name no one.
    func view(for reader: Username, isHidden: (Username) -> Bool = { _ in false }) -> FeedPost {
        FeedPost(
            id: id, author: author, text: text, activity: activity, at: at, time: time, likes: likers.count,
            liked: likers.contains(reader), comments: comments.count,
            recentComments: recentComments(isHidden: isHidden))
    }

    /// The newest `Feed.inlineComments` comments not `isHidden`, newest first.
    private func recentComments(isHidden: (Username) -> Bool) -> [FeedComment] {
        var recent: [FeedComment] = []
        for comment in comments.reversed() where !isHidden(comment.author) {
            recent.append(comment)
            if recent.count == Feed.inlineComments { break }
        }
        return recent
    }

    /// A page of comments, newest first: ids below `before` (nil: from the newest), at most
    /// `limit`; `nextBefore` is nil when nothing older is kept.
    func comments(before: UInt64?, limit: Int) -> (comments: [FeedComment], nextBefore: UInt64?) {
        let end = before.map { before in Feed.countOfIDs(in: comments.lazy.map(\.id), below: before) } ?? comments.count
        let start = max(end - max(limit, 1), 0)
        return (Array(comments[start..<end].reversed()), start > 0 ? comments[start].id : nil)
    }

    mutating func append(_ comment: FeedComment) {
        comments.append(comment)
        lastCommentID = max(lastCommentID, comment.id)
        if comments.count > Feed.maxCommentsPerPost { comments.removeFirst(comments.count - Feed.maxCommentsPerPost) }
    }

    /// Account deletion: the user's like and comments go (the comment counter stays).
    mutating func eraseContributions(of user: Username) {
        likers.remove(user)
        comments.removeAll { $0.author == user }
    }
}

/// Likers sorted, so equal posts encode to equal bytes whatever the set's hash seed.
extension StoredPost: PersistedValue {
    var persisted: JSONValue {
        .record([
            ("id", id.persisted), ("author", author.persisted), ("text", text.persisted), ("activity", activity?.persisted), ("at", at?.persisted),
            ("time", time.persisted), ("likers", likers.sorted().persisted), ("comments", comments.persisted), ("lastCommentID", lastCommentID.persisted),
        ])
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "StoredPost")
        self.init(id: try f("id"), author: try f("author"), text: try f("text"), activity: try f.optional("activity"), at: try f.optional("at"), time: try f("time"))
        let likerList: [Username] = try f("likers")
        likers = Set(likerList)
        guard likers.count == likerList.count else { throw RecordDecodingError("a like of post \(id) appears twice") }
        comments = try f("comments")
        lastCommentID = try f("lastCommentID")
        let ascending = zip(comments, comments.dropFirst()).allSatisfy { $0.id < $1.id }
        guard ascending, comments.count <= Feed.maxCommentsPerPost, (comments.last?.id ?? 0) <= lastCommentID else {
            throw RecordDecodingError("the comments of post \(id) are out of order, too many or past its counter")
        }
    }
}
