import Foundation
import HuddleClient
import HuddleProtocol

/// Signing up, in and out.
extension ChatCommand {
    static let accountCommands: [ChatCommand] = [
        ChatCommand("signup", ["USER", "EMAIL", "PASSWORD"], summary: "create an account and sign in") { app, arguments, done in
            app.client.signUp(username: arguments[0], email: arguments[1], password: arguments[2]) { outcome in
                app.report(outcome, done) { session in
                    app.signedIn(session, newAccount: true)
                    return ChatLines.ok("signed up as \(session.user.username)")
                }
            }
        },
        ChatCommand("login", ["USER", "PASSWORD"], summary: "sign in (USER may be your email)") { app, arguments, done in
            app.client.logIn(login: arguments[0], password: arguments[1]) { outcome in
                app.report(outcome, done) { session in
                    app.signedIn(session)
                    return ChatLines.ok("logged in as \(session.user.username)")
                }
            }
        },
        ChatCommand("logout", summary: "sign out and forget the session on this machine") { app, _, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.logOut { outcome in
                app.report(outcome, done) { _ in
                    app.signedOut()
                    return ChatLines.ok("logged out")
                }
            }
        },
        ChatCommand("whoami", summary: "who you are signed in as") { app, _, done in
            guard app.username != nil else {
                app.show(ChatLines.ok("not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD"))
                return done()
            }
            app.client.whoami { outcome in
                app.report(outcome, done) { session in
                    let expiry = Date(timeIntervalSince1970: Double(session.expiresAt) / 1000)
                    return ChatLines.ok("\(session.user.username) <\(ChatLines.clean(session.user.email))>, session valid until \(expiry.formatted(.iso8601))")
                }
            }
        },
    ]
}

extension ChatApp {
    /// Shows the line `success` makes of a result, or the error; then lets the next command run.
    func report<Value>(_ outcome: Result<Value, HuddleClientError>, _ done: () -> Void, success: (Value) -> String?) {
        switch outcome {
        case .success(let value):
            if let line = success(value) { show(line) }
        case .failure(let error):
            show(ChatLines.error(error))
        }
        done()
    }
}
