import HuddleProtocol

/// The circle feed (durable): every kept post with its likes and comments, indexed by id and by
/// author (protocol.md, "Feed").
///
/// Post ids come from one counter for the whole server, so they grow with time: "newest first"
/// is "highest id first", and an id is a stable paging cursor. The counter is durable and the
/// id travels in the `createPost` command, so a replay gives every post the id it had.
/// Each author keeps their newest `maxPostsPerAuthor` posts; a newer one drops the oldest with
/// its likes and comments. Coded as a list of posts sorted by id, so equal states encode to
/// equal bytes; the author index is rebuilt when decoding.
public struct Feed: Sendable, Equatable {
    /// Bounds of the durable state (protocol.md, "Limits"). Every core replaying a log must use
    /// the same ones to reach the same state, so they are constants, not configuration.
    public static let maxPostsPerAuthor = 1000
    public static let maxCommentsPerPost = 1000
    /// How many of the newest comments come inside a post.
    public static let inlineComments = 5
    /// The largest page of `feed` and `comments`.
    public static let maxPageSize = 50

    /// The id of the newest post ever made (0: none), kept, dropped or deleted.
    public private(set) var lastPostID: UInt64 = 0
    private var postsByID: [UInt64: StoredPost] = [:]
    /// Each author's kept post ids, oldest first (ascending).
    private var idsByAuthor: [Username: [UInt64]] = [:]

    public init() {}

    public subscript(id: UInt64) -> StoredPost? { postsByID[id] }

    public var postCount: Int { postsByID.count }

    /// The author's kept post ids, oldest first.
    public func postIDs(of author: Username) -> [UInt64] {
        idsByAuthor[author] ?? []
    }

    /// Adds a post; beyond the author's bound the oldest goes, likes and comments with it.
    mutating func insert(_ post: StoredPost) {
        postsByID[post.id] = post
        lastPostID = max(lastPostID, post.id)
        // Ids only grow, so appending keeps the list ascending; a post from a log replayed out
        // of order (which `handle` never makes) still lands in its place.
        var ids = idsByAuthor.removeValue(forKey: post.author) ?? []
        ids.insert(post.id, at: Self.countOfIDs(in: ids, below: post.id))
        if ids.count > Self.maxPostsPerAuthor {
            for dropped in ids.prefix(ids.count - Self.maxPostsPerAuthor) { postsByID[dropped] = nil }
            ids.removeFirst(ids.count - Self.maxPostsPerAuthor)
        }
        idsByAuthor[post.author] = ids
    }

    /// Returns false when there was no such post (dropped, or deleted already).
    @discardableResult
    mutating func setLike(post id: UInt64, user: Username, liked: Bool) -> Bool {
        guard postsByID[id] != nil else { return false }
        if liked {
            postsByID[id]!.likers.insert(user)
        } else {
            postsByID[id]!.likers.remove(user)
        }
        return true
    }

    /// Returns false when there was no such post.
    @discardableResult
    mutating func addComment(_ comment: FeedComment, to id: UInt64) -> Bool {
        guard postsByID[id] != nil else { return false }
        postsByID[id]!.append(comment)
        return true
    }

    /// Removes the post if `author` wrote it; returns whether it did.
    @discardableResult
    mutating func remove(post id: UInt64, author: Username) -> Bool {
        guard postsByID[id]?.author == author else { return false }
        postsByID[id] = nil
        var ids = idsByAuthor.removeValue(forKey: author) ?? []
        let index = Self.countOfIDs(in: ids, below: id)
        if index < ids.count, ids[index] == id { ids.remove(at: index) }
        if !ids.isEmpty { idsByAuthor[author] = ids }
        return true
    }

    /// A page of the posts of `authors`, newest first: ids below `before` (nil: from the
    /// newest), at most `limit`. `nextBefore` is the `before` of the next (older) page, nil when
    /// there is nothing older. Costs O(authors · log + limit · log authors): it merges the
    /// authors' own lists and never looks at anyone else's posts.
    func page(of authors: Set<Username>, before: UInt64?, limit: Int) -> (posts: [StoredPost], nextBefore: UInt64?) {
        let lists = authors.compactMap { idsByAuthor[$0] }
        let ids = NewestFirstMerge.ids(of: lists, below: before, count: max(limit, 1) + 1)
        let shown = ids.prefix(max(limit, 1))
        return (shown.map { postsByID[$0]! }, ids.count > shown.count ? shown.last : nil)
    }

    /// How many of the ascending `ids` are below `bound`: where `bound` would be inserted.
    static func countOfIDs<IDs: RandomAccessCollection>(in ids: IDs, below bound: UInt64) -> Int
    where IDs.Element == UInt64, IDs.Index == Int {
        var low = ids.startIndex
        var high = ids.endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if ids[middle] < bound { low = middle + 1 } else { high = middle }
        }
        return low - ids.startIndex
    }

    /// Export: the user's comments on everyone else's posts, and the posts they like, by post
    /// id. O(posts), as `erase`.
    func contributions(of user: Username) -> (comments: [(post: UInt64, comment: FeedComment)], liked: [UInt64]) {
        var comments: [(post: UInt64, comment: FeedComment)] = []
        var liked: [UInt64] = []
        for id in postsByID.keys.sorted() {
            let post = postsByID[id]!
            if post.likers.contains(user) { liked.append(id) }
            guard post.author != user else { continue }
            for comment in post.comments where comment.author == user { comments.append((id, comment)) }
        }
        return (comments, liked)
    }

    /// The operator removed a comment; returns false when there was no such comment.
    @discardableResult
    mutating func removeComment(_ comment: UInt64, from post: UInt64) -> Bool {
        guard let index = postsByID[post]?.comments.firstIndex(where: { $0.id == comment }) else { return false }
        postsByID[post]!.comments.remove(at: index)
        return true
    }

    /// Account deletion: the user's posts (with their likes and comments), and their likes and
    /// comments on everyone else's posts. O(posts): a scan, as deletions are rare.
    mutating func erase(_ user: Username) {
        for id in idsByAuthor[user] ?? [] { remove(post: id, author: user) }
        for id in Array(postsByID.keys) {
            let post = postsByID[id]!
            guard post.likers.contains(user) || post.comments.contains(where: { $0.author == user }) else { continue }
            postsByID[id]!.eraseContributions(of: user)
        }
    }
}

/// The post counter and the posts by id.
extension Feed: PersistedValue {
    var persisted: JSONValue {
        .record([("lastPostID", lastPostID.persisted), ("posts", .array(postsByID.keys.sorted().map { postsByID[$0]!.persisted }))])
    }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Feed")
        lastPostID = try f("lastPostID")
        let posts: [StoredPost] = try f("posts")
        for post in posts {
            guard post.id > 0, post.id <= lastPostID, postsByID[post.id] == nil,
                  (idsByAuthor[post.author]?.count ?? 0) < Self.maxPostsPerAuthor
            else {
                throw RecordDecodingError("post \(post.id) is repeated, past the counter, or over its author's bound")
            }
            insert(post)
        }
    }
}
