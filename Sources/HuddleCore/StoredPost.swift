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

    /// The post as `reader` sees it.
    func view(for reader: Username) -> FeedPost {
        FeedPost(
            id: id, author: author, text: text, activity: activity, at: at, time: time, likes: likers.count,
            liked: likers.contains(reader), comments: comments.count,
            recentComments: Array(comments.suffix(Feed.inlineComments).reversed()))
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
}

extension StoredPost: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, author, text, activity, at, time, likers, comments, lastCommentID
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UInt64.self, forKey: .id)
        author = try container.decode(Username.self, forKey: .author)
        text = try container.decode(String.self, forKey: .text)
        activity = try container.decodeIfPresent(String.self, forKey: .activity)
        at = try container.decodeIfPresent(Int64.self, forKey: .at)
        time = try container.decode(Int64.self, forKey: .time)
        let likerList = try container.decode([Username].self, forKey: .likers)
        likers = Set(likerList)
        guard likers.count == likerList.count else {
            throw DecodingError.dataCorruptedError(forKey: .likers, in: container, debugDescription: "a like of post \(id) appears twice")
        }
        comments = try container.decode([FeedComment].self, forKey: .comments)
        lastCommentID = try container.decode(UInt64.self, forKey: .lastCommentID)
        let ascending = zip(comments, comments.dropFirst()).allSatisfy { $0.id < $1.id }
        guard ascending, comments.count <= Feed.maxCommentsPerPost, (comments.last?.id ?? 0) <= lastCommentID else {
            throw DecodingError.dataCorruptedError(
                forKey: .comments, in: container, debugDescription: "the comments of post \(id) are out of order, too many or past its counter")
        }
    }

    /// Likers sorted, so equal posts encode to equal bytes whatever the set's hash seed.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(author, forKey: .author)
        try container.encode(text, forKey: .text)
        try container.encodeIfPresent(activity, forKey: .activity)
        try container.encodeIfPresent(at, forKey: .at)
        try container.encode(time, forKey: .time)
        try container.encode(likers.sorted(), forKey: .likers)
        try container.encode(comments, forKey: .comments)
        try container.encode(lastCommentID, forKey: .lastCommentID)
    }
}
