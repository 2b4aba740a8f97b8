import HuddleCore
import HuddleProtocol

/// The core's feed values in their wire form (protocol.md, "Feed" and "Events").
enum FeedEncoding {
    static func post(_ post: FeedPost) -> JSONValue {
        ServerMessage.feedPostObject(
            id: post.id, author: post.author, text: post.text, activity: post.activity, at: post.at, time: post.time,
            likes: post.likes, liked: post.liked, comments: post.comments, recentComments: post.recentComments.map(comment))
    }

    static func comment(_ comment: FeedComment) -> JSONValue {
        ServerMessage.feedCommentObject(id: comment.id, author: comment.author, text: comment.text, time: comment.time)
    }

    /// `feed`'s and `comments`' result.
    static func page(_ key: String, _ items: [JSONValue], post: UInt64? = nil, nextBefore: UInt64?) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let post { members.append(("post", .integer(post))) }
        members.append((key, .array(items)))
        members.append(("next_before", nextBefore.map { JSONValue.integer($0) } ?? .null))
        return .object(members)
    }

    /// The event's message, encoded once for all its recipients.
    static func event(_ event: FeedEvent) -> [UInt8] {
        switch event {
        case .posted(let post):
            return ServerMessage.postEvent(post: self.post(post), time: post.time)
        case .liked(let post, let author, let user, let liked, let likes, let time):
            return ServerMessage.likeEvent(post: post, author: author, user: user, liked: liked, likes: likes, time: time)
        case .commented(let post, let author, let comment, let comments):
            return ServerMessage.commentEvent(post: post, author: author, comment: self.comment(comment), comments: comments, time: comment.time)
        case .deleted(let post, let author, let time):
            return ServerMessage.postDeletedEvent(post: post, author: author, time: time)
        }
    }
}
