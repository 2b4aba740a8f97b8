import HuddleClient
import HuddleProtocol

/// The circle: posts of you and your friends, likes and comments. Your own posts, likes and
/// comments show as their live lines (as a chat message does), so those commands print nothing
/// more when they succeed.
extension ChatCommand {
    static let feedCommands: [ChatCommand] = [
        ChatCommand("post", rest: "TEXT", restIsRequired: true, summary: "post TEXT to your circle (you and your friends see it)") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.post(text: arguments[0]) { outcome in app.report(outcome, done) { _ in nil } }
        },
        ChatCommand("feed", rest: "more", summary: "the newest posts of your circle; /feed more: the next older ones") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            let more = !arguments.isEmpty
            if more && arguments[0].lowercased() != "more" {
                app.show(ChatLines.usage("/feed [more]"))
                return done()
            }
            if more && app.feedMoreBefore == nil {
                app.show("[feed] no older posts (/feed starts again from the newest)")
                return done()
            }
            app.client.feed(before: more ? app.feedMoreBefore : nil) { outcome in
                switch outcome {
                case .success(let page):
                    for post in page.posts { app.show(ChatLines.feedEntry(post)) }
                    app.feedMoreBefore = page.nextBefore
                    if page.posts.isEmpty && !more {
                        app.show("[feed] nothing yet: /post TEXT")
                    } else {
                        app.show(page.nextBefore == nil ? "[feed] no older posts" : "[feed] /feed more for older posts")
                    }
                case .failure(let error):
                    app.show(ChatLines.error(error))
                }
                done()
            }
        },
        ChatCommand("like", ["ID"], summary: "like post ID") { app, arguments, done in
            setLike(app, arguments[0], true, done)
        },
        ChatCommand("unlike", ["ID"], summary: "take your like of post ID back") { app, arguments, done in
            setLike(app, arguments[0], false, done)
        },
        ChatCommand("comment", ["ID"], rest: "TEXT", restIsRequired: true, summary: "comment on post ID") { app, arguments, done in
            guard app.requireSignIn() != nil, let post = postID(app, arguments[0]) else { return done() }
            app.client.comment(on: post, text: arguments[1]) { outcome in app.report(outcome, done) { _ in nil } }
        },
        ChatCommand("comments", ["ID"], summary: "the comments on post ID") { app, arguments, done in
            guard app.requireSignIn() != nil, let post = postID(app, arguments[0]) else { return done() }
            app.client.comments(on: post) { outcome in
                app.report(outcome, done) { page in
                    guard !page.comments.isEmpty else { return "[comments \(post)] none yet: /comment \(post) TEXT" }
                    let count = page.comments.count == 1 ? "1 comment" : "\(page.comments.count) comments"
                    app.show("[comments \(post)] " + (page.nextBefore == nil ? count : "the newest \(count)") + ", oldest first:")
                    for comment in page.comments.reversed() { app.show(ChatLines.comment(comment, on: post)) }
                    return nil
                }
            }
        },
        ChatCommand("delete-post", ["ID"], summary: "delete your post ID, with its likes and comments") { app, arguments, done in
            guard app.requireSignIn() != nil, let post = postID(app, arguments[0]) else { return done() }
            app.client.deletePost(post) { outcome in app.report(outcome, done) { _ in nil } }
        },
    ]

    private static func setLike(_ app: ChatApp, _ word: String, _ liked: Bool, _ done: @escaping () -> Void) {
        guard app.requireSignIn() != nil, let post = postID(app, word) else { return done() }
        app.client.like(post: post, liked: liked) { outcome in app.report(outcome, done) { _ in nil } }
    }

    /// `word` as a post id, or an error line and nil.
    private static func postID(_ app: ChatApp, _ word: String) -> UInt64? {
        guard let id = CommandArguments.id(word) else {
            app.show(ChatLines.badArgument("\(ChatLines.quoted(word)) is not a post number (/feed shows them)"))
            return nil
        }
        return id
    }
}
