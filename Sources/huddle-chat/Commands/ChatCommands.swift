import HuddleClient
import HuddleProtocol

/// Chat rooms: opening one, and what is unread. Plain text (not starting with `/`) is sent to
/// the open room.
extension ChatCommand {
    static let chatCommands: [ChatCommand] = [
        ChatCommand("chat", ["USER"], summary: "open the chat with USER: recent messages, then type to send") { app, arguments, done in
            app.openChat(with: arguments[0], done: done)
        },
        ChatCommand("unread", summary: "unread messages per friend") { app, _, done in
            guard let me = app.requireSignIn() else { return done() }
            app.client.unread { outcome in
                app.report(outcome, done) { summary in app.unreadLine(summary, me: me) }
            }
        },
    ]
}
