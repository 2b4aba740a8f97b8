import HuddleClient
import HuddleProtocol

/// Being up for something now, and the friends who are too. A match arrives live as
/// `[match] bob is up for Coffee too`.
extension ChatCommand {
    static let activityCommands: [ChatCommand] = [
        ChatCommand("activities", summary: "the activities there are, and the ones you are up for") { app, _, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.activities { outcome in app.report(outcome, done, success: ChatLines.activities) }
        },
        ChatCommand("on", ["ACTIVITY"], rest: "[for USER,USER] [for 30m]", summary: "up for ACTIVITY now (all friends, 2 h by default)") {
            app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            guard let (friends, seconds) = CommandArguments.activityOptions(arguments.count > 1 ? arguments[1] : nil) else {
                app.show(ChatLines.usage("/on ACTIVITY [for USER,USER] [for 30m] (a duration is 90s, 30m or 2h)"))
                return done()
            }
            app.client.activityOn(arguments[0], friends: friends, expiresIn: seconds) { outcome in
                app.report(outcome, done) { status in ChatLines.ok("you are up for " + ChatLines.status(status)) }
            }
        },
        ChatCommand("off", ["ACTIVITY"], summary: "you are no longer up for ACTIVITY") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.activityOff(arguments[0]) { outcome in
                app.report(outcome, done) { _ in ChatLines.ok("you are no longer up for \(ChatLines.clean(arguments[0]))") }
            }
        },
        ChatCommand("matches", rest: "by-activity", summary: "friends up for the same as you now, newest first (or by activity)") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            guard arguments.isEmpty || arguments[0].lowercased() == "by-activity" else {
                app.show(ChatLines.usage("/matches [by-activity]"))
                return done()
            }
            app.client.matches(order: arguments.isEmpty ? .time : .activity) { outcome in app.report(outcome, done, success: ChatLines.matches) }
        },
    ]
}
