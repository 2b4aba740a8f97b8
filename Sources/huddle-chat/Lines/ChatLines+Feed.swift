import HuddleClient
import HuddleProtocol

/// The circle feed's lines: `[post 12] alice: gym at 6? (Gym at 18:00)` as posts come,
/// `[feed 12] …` in a listing, likes and comments as they happen.
extension ChatLines {
    /// A post as it arrives live.
    static func post(_ post: FeedPost) -> String {
        "[post \(post.id)] \(clean(post.author)): \(clean(post.text))\(plan(post))"
    }

    /// A post in `/feed`: with its counts.
    static func feedEntry(_ post: FeedPost) -> String {
        let likes = post.likes == 1 ? "1 like" : "\(post.likes) likes"
        let comments = post.comments == 1 ? "1 comment" : "\(post.comments) comments"
        return "[feed \(post.id)] \(clean(post.author)): \(clean(post.text))\(plan(post)) — \(likes)\(post.liked ? " (you too)" : ""), \(comments)"
    }

    /// ` (Coffee at 18:00)`, ` (Coffee)`, ` (at 18:00)` or nothing.
    private static func plan(_ post: FeedPost) -> String {
        switch (post.activity, post.at) {
        case (let activity?, let at?): return " (\(clean(activity)) at \(ChatClock.time(at)))"
        case (let activity?, nil): return " (\(clean(activity)))"
        case (nil, let at?): return " (at \(ChatClock.time(at)))"
        case (nil, nil): return ""
        }
    }

    static func comment(_ comment: FeedComment, on post: UInt64) -> String {
        "[comment \(post) #\(comment.id)] \(clean(comment.author)): \(clean(comment.text))"
    }

    /// A live feed event, worded for `me`.
    static func feedEvent(_ event: FeedEvent, me: String) -> String {
        func whose(_ author: String) -> String { author == me ? "your" : "\(clean(author))'s" }
        func who(_ user: String) -> String { user == me ? "you" : clean(user) }
        switch event {
        case .posted(let post):
            return self.post(post)
        case .liked(let post, let author, let user, let liked, let likes, _):
            let verb = liked ? (user == me ? "like" : "likes") : (user == me ? "no longer like" : "no longer likes")
            return "[like] \(who(user)) \(verb) \(whose(author)) post \(post) (\(likes == 1 ? "1 like" : "\(likes) likes"))"
        case .commented(let post, let author, let comment, _):
            return "[comment \(post) #\(comment.id)] \(who(comment.author)) on \(whose(author)) post: \(clean(comment.text))"
        case .deleted(let post, let author, _):
            return "[post \(post)] \(who(author)) deleted it"
        case .commentRemoved(let post, _, let comment, _, _):
            return "[comment \(post) #\(comment)] removed by the server"
        }
    }
}
