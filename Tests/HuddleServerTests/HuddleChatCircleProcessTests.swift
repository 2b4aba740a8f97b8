import ChildProcessExit
import Foundation
import Testing

/// huddle-chat's circle, activities and places as people use them: two real processes in
/// their line mode against the real server, checked by the lines they print.
@Suite(.ownThread) struct HuddleChatCircleProcessTests {
    static let password = HuddleChatProcessTests.password

    /// `[post 12] alice: text` → 12.
    static func postID(_ line: String, text: String) -> Int? {
        guard line.hasPrefix("[post "), line.hasSuffix("] alice: \(text)") else { return nil }
        return Int(line.dropFirst("[post ".count).prefix { $0.isNumber })
    }

    /// alice and bob befriend; both turn Coffee on and each prints the match; alice posts, bob
    /// sees it live and likes it, alice sees the like; bob defines home and arrives → alice
    /// sees where he is; a post made while bob is cut off shows once he is back; every new
    /// error code reads as a clear line.
    @Test func matchesPostsLikesAndPlacesArriveLive() async throws {
        let server = try await startHuddle()
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let home = try HuddleChatProcessTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let alice = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("alice.json"))
        let bob = try ChatProcess(url: proxy.url, settingsFile: home.appendingPathComponent("bob.json"))

        try alice.send("/signup alice alice@example.com \(Self.password)")
        try bob.send("/signup bob bob@example.com \(Self.password)")
        try await alice.line("[ok] signed up as alice")
        try await bob.line("[ok] signed up as bob")
        try alice.send("/add bob")
        try await bob.line("the request") { $0.hasPrefix("[friend-request] from alice") }
        try bob.send("/accept alice")
        try await alice.line("[friend] you and bob are now friends")
        try await bob.line("[ok] accepted alice's request")

        // Coffee: bob first, then alice; both are told at once.
        try bob.send("/on Coffee")
        try await bob.line("bob's status") { $0.hasPrefix("[ok] you are up for Coffee until ") && $0.hasSuffix(", for every friend") }
        try alice.send("/on coffee for bob for 30m")
        try await alice.line("alice's status") { $0.hasPrefix("[ok] you are up for Coffee until ") && $0.hasSuffix(", for bob") }
        try await alice.line("[match] bob is up for Coffee too")
        try await bob.line("[match] alice is up for Coffee too")
        try bob.send("/matches")
        try await bob.line("the match listed") { $0.hasPrefix("[matches] alice: Coffee (since ") }

        // A post, seen live by bob, liked and commented on; alice sees both.
        try alice.send("/post gym at 6?")
        let postLine = try await bob.line("alice's post") { Self.postID($0, text: "gym at 6?") != nil }
        let post = try #require(Self.postID(postLine, text: "gym at 6?"))
        try await alice.line("[post \(post)] alice: gym at 6?")
        try bob.send("/like \(post)")
        try await alice.line("[like] bob likes your post \(post) (1 like)")
        try await bob.line("[like] you like alice's post \(post) (1 like)")
        try bob.send("/comment \(post) count me in")
        try await alice.line("[comment \(post) #1] bob on your post: count me in")
        try alice.send("/feed")
        try await alice.line("[feed \(post)] alice: gym at 6? — 1 like, 1 comment")
        try await alice.line("[feed] no older posts")

        // bob's home: alice, who follows bob's place, sees him arrive.
        try bob.send("/place-add home 48.8566 2.3522 100")
        try await bob.line("[ok] place 1 home (48.8566, 2.3522, r 100 m); /at 1 when you are there")
        try bob.send("/at 1")
        try await bob.line("bob's arrival") { $0.hasPrefix("[ok] you are at home (since ") }
        try await alice.line("bob at home") { $0.hasPrefix("[place] bob is at home (since ") }
        try alice.send("/where bob")
        try await alice.line("where bob is") { $0.hasPrefix("[where] bob is at home (since ") }

        // bob is cut off; alice posts meanwhile; bob shows it once back.
        proxy.setRefusing(true)
        proxy.cutAll(reset: true)
        try await bob.line("the drop") { $0.hasPrefix("[connection] lost") }
        try alice.send("/post while you were away")
        try await alice.line("alice's own second post") { Self.postID($0, text: "while you were away") != nil }
        let reconnects = bob.lines.count
        proxy.setRefusing(false)
        try await bob.line("[connection] connected as bob", after: reconnects)
        try await bob.line("the missed post", after: reconnects) { Self.postID($0, text: "while you were away") != nil }

        // Every new error code, and the misuses caught before the server.
        for (command, answer) in [
            ("/like 999", "[error] post_not_found: no post 999 in your feed (/feed lists the posts you can see)"),
            ("/like \(post)", "[error] already_liked: you like post \(post) already"),
            ("/unlike \(post)x", #"[error] bad_argument: "\#(post)x" is not a post number (/feed shows them)"#),
            ("/delete-post \(post)", "[error] forbidden: only its author may delete post \(post)"),
            ("/off Gym", "[error] not_on: Gym is not on (/activities shows what is on)"),
            ("/on Coffee for carol", "[error] not_friends: not your friends: carol"),
            ("/on Coffee for", "[error] usage: /on ACTIVITY [for USER,USER] [for 30m] (a duration is 90s, 30m or 2h)"),
            ("/at 7", "[error] place_not_found: you have no place 7 (/places lists yours)"),
            ("/place-add x 91 0 100", "[error] bad_request: lat must be from -90 to 90 degrees"),
            ("/place-add x north 0 100", "[error] bad_argument: LAT, LON and RADIUS are numbers: /place-add home 48.8566 2.3522 100"),
            ("/post", "[error] usage: /post TEXT"),
            ("/feed later", "[error] usage: /feed [more]"),
        ] {
            let before = bob.lines.count
            try bob.send(command)
            try await bob.line(answer, after: before)
        }
        var before = bob.lines.count
        try bob.send("/on Tennis")
        try await bob.line("unknown activity", after: before) { $0.hasPrefix("[error] unknown_activity: no activity \"Tennis\"; the activities are Gym, Coffee") }
        before = bob.lines.count
        try bob.send("/help")
        for usage in ["/post TEXT", "/feed [more]", "/on ACTIVITY [for USER,USER] [for 30m]", "/matches [by-activity]", "/place-add LABEL LAT LON RADIUS", "/where USER"] {
            try await bob.line("help for \(usage)", after: before) { $0.hasPrefix("[help] \(usage) — ") }
        }

        // Off: the match ends for both.
        try bob.send("/off coffee")
        try await bob.line("[ok] you are no longer up for coffee")
        try await alice.line("[match-ended] Coffee with bob is over (one of you turned it off)")
        try await bob.line("[match-ended] Coffee with alice is over (one of you turned it off)")

        for chat in [alice, bob] {
            #expect(!chat.lines.contains { $0.hasPrefix("[warning]") }, "\(chat.lines.filter { $0.hasPrefix("[warning]") })")
            try chat.closeInput()
            // bob's script had failing commands above: its status says so.
            #expect(try await chat.exitStatus() == (chat === bob ? 1 : 0))
        }
        #expect(alice.lines.filter { $0.hasPrefix("[error]") }.isEmpty, "\(alice.lines.filter { $0.hasPrefix("[error]") })")
    }
}
