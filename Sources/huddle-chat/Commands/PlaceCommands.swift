import HuddleClient
import HuddleProtocol

/// Your places, telling the server where you are, and where a friend is. Friends see only a
/// place's label, never a coordinate; their changes arrive live as `[place] bob is at work`.
extension ChatCommand {
    static let placeCommands: [ChatCommand] = [
        ChatCommand("places", summary: "your places: id, label, where, radius") { app, _, done in
            guard app.requireSignIn() != nil else { return done() }
            app.client.places { outcome in
                app.report(outcome, done) { places in
                    places.isEmpty
                        ? "[places] none yet: /place-add LABEL LAT LON RADIUS"
                        : "[places] " + places.map(ChatLines.place).joined(separator: "; ")
                }
            }
        },
        ChatCommand("place-add", ["LABEL", "LAT", "LON", "RADIUS"], summary: "a new place: its centre in degrees, its radius in metres") {
            app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            guard let latitude = CommandArguments.number(arguments[1]), let longitude = CommandArguments.number(arguments[2]),
                let radius = CommandArguments.number(arguments[3])
            else {
                app.show(ChatLines.badArgument("LAT, LON and RADIUS are numbers: /place-add home 48.8566 2.3522 100"))
                return done()
            }
            app.client.setPlace(label: arguments[0], latitude: latitude, longitude: longitude, radius: radius) { outcome in
                app.report(outcome, done) { place in ChatLines.ok("place \(ChatLines.place(place)); /at \(place.id) when you are there") }
            }
        },
        ChatCommand("place-remove", ["ID"], summary: "remove your place ID") { app, arguments, done in
            guard app.requireSignIn() != nil, let id = placeID(app, arguments[0]) else { return done() }
            app.client.removePlace(id) { outcome in app.report(outcome, done) { _ in ChatLines.ok("place \(id) removed") } }
        },
        ChatCommand("at", ["PLACE_ID"], summary: "you arrived at place PLACE_ID (as phone region monitoring reports)") { app, arguments, done in
            region(app, arguments[0], entered: true, done)
        },
        ChatCommand("leave", ["PLACE_ID"], summary: "you have left your place PLACE_ID") { app, arguments, done in
            region(app, arguments[0], entered: false, done)
        },
        ChatCommand("fix", ["LAT", "LON", "ACCURACY"], summary: "your position (degrees; accuracy in m): the server picks the place") {
            app, arguments, done in
            guard app.requireSignIn() != nil else { return done() }
            guard let latitude = CommandArguments.number(arguments[0]), let longitude = CommandArguments.number(arguments[1]),
                let accuracy = CommandArguments.number(arguments[2])
            else {
                app.show(ChatLines.badArgument("LAT, LON and ACCURACY are numbers: /fix 48.8566 2.3522 15"))
                return done()
            }
            app.client.reportFix(latitude: latitude, longitude: longitude, accuracy: accuracy, time: ChatClock.nowMilliseconds()) { outcome in
                app.report(outcome, done, success: ChatLines.placeDecision)
            }
        },
        ChatCommand("where", ["USER"], summary: "where USER (a friend) is") { app, arguments, done in
            guard let me = app.requireSignIn() else { return done() }
            app.client.whereIs(arguments[0].lowercased()) { outcome in
                app.report(outcome, done) { whereabouts in "[where] " + ChatLines.whereabouts(whereabouts, me: me) }
            }
        },
    ]

    private static func region(_ app: ChatApp, _ word: String, entered: Bool, _ done: @escaping () -> Void) {
        guard app.requireSignIn() != nil, let id = placeID(app, word) else { return done() }
        app.client.reportRegion(placeID: id, entered: entered, time: ChatClock.nowMilliseconds()) { outcome in
            app.report(outcome, done, success: ChatLines.placeDecision)
        }
    }

    /// `word` as a place id, or an error line and nil.
    private static func placeID(_ app: ChatApp, _ word: String) -> UInt64? {
        guard let id = CommandArguments.id(word) else {
            app.show(ChatLines.badArgument("\(ChatLines.quoted(word)) is not a place number (/places shows them)"))
            return nil
        }
        return id
    }
}
