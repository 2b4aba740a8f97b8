import HuddleClient
import HuddleProtocol

/// Finding people and managing friendships.
extension ChatCommand {
    static let friendCommands: [ChatCommand] = [
        ChatCommand("friends", summary: "your friends, and who is online") { app, _, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.friends { outcome in
                app.report(outcome, done) { friends in
                    guard !friends.isEmpty else { return "[friends] none yet: /search PREFIX, then /add USER" }
                    return "[friends] " + friends.map { "\($0.username) (\($0.online ? "online" : "offline"))" }.joined(separator: ", ")
                }
            }
        },
        ChatCommand("requests", summary: "friend requests waiting for an answer") { app, _, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.friendRequests { outcome in
                app.report(outcome, done) { list in
                    func entries(_ list: [FriendRequestEntry]) -> String {
                        list.isEmpty ? "none" : list.map { "\($0.user) \(ChatLines.quoted($0.message))" }.joined(separator: ", ")
                    }
                    return "[requests] incoming: \(entries(list.incoming)); outgoing: \(entries(list.outgoing))"
                }
            }
        },
        ChatCommand("add", ["USER"], rest: "message", summary: "ask USER to be your friend") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            let user = arguments[0].lowercased()
            app.client.sendFriendRequest(to: user, message: arguments.count > 1 ? arguments[1] : nil) { outcome in
                app.report(outcome, done) { result in
                    switch result {
                    case .requested:
                        return ChatLines.ok("friend request sent to \(user)")
                    case .friends:
                        app.followFriend(user)
                        return ChatLines.ok("\(user) had asked you too: you are now friends")
                    }
                }
            }
        },
        ChatCommand("accept", ["USER"], summary: "accept USER's friend request") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            let user = arguments[0].lowercased()
            app.client.acceptFriendRequest(from: user) { outcome in
                app.report(outcome, done) { _ in
                    app.followFriend(user)
                    return ChatLines.ok("accepted \(user)'s request")
                }
            }
        },
        ChatCommand("decline", ["USER"], summary: "decline USER's friend request") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            let user = arguments[0].lowercased()
            app.client.declineFriendRequest(from: user) { outcome in
                app.report(outcome, done) { _ in ChatLines.ok("declined \(user)'s request") }
            }
        },
        ChatCommand("cancel", ["USER"], summary: "withdraw your friend request to USER") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            let user = arguments[0].lowercased()
            app.client.cancelFriendRequest(to: user) { outcome in
                app.report(outcome, done) { _ in ChatLines.ok("withdrew your request to \(user)") }
            }
        },
        ChatCommand("remove", ["USER"], summary: "end your friendship with USER") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            let user = arguments[0].lowercased()
            app.client.removeFriend(user) { outcome in
                app.report(outcome, done) { _ in ChatLines.ok("\(user) is no longer your friend") }
            }
        },
        ChatCommand("search", ["PREFIX"], summary: "users whose name starts with PREFIX") { app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.searchUsers(prefix: arguments[0]) { outcome in
                app.report(outcome, done) { users in
                    users.isEmpty ? "[search] nobody's name starts with \(ChatLines.quoted(arguments[0]))" : "[search] " + users.joined(separator: ", ")
                }
            }
        },
    ]
}
