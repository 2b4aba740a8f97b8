import ChildProcessExit
import Foundation
import Testing

/// huddle-chat as a newcomer and a script meet it (issue 18): sessions kept per user, failures
/// that retrying cannot fix, a long outage, exit statuses, and the end of piped input.
@Suite(.ownThread) struct HuddleChatScriptProcessTests {
    static let password = HuddleChatProcessTests.password

    /// Two people on one machine account, as the README runs them: the second one started
    /// while the first is signed in is not opened as the first; each resumes their own
    /// session with `--user`, and a start without it resumes none of several (it lists them).
    @Test func twoUsersOnOneAccountKeepTheirOwnSessions() async throws {
        let server = try await startHuddle()
        let home = try HuddleChatProcessTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }

        let alice = try ChatProcess(url: server.url, settingsFile: nil, home: home)
        try alice.send("/signup alice alice@example.com \(Self.password)")
        try await alice.line("[ok] signed up as alice")
        let bob = try ChatProcess(url: server.url, settingsFile: nil, home: home)
        try await bob.line("[session] alice is signed in in another huddle-chat; start with --user alice to share that session")
        try await bob.line("[connection] connected, not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        try bob.send("/signup bob bob@example.com \(Self.password)")
        try await bob.line("[ok] signed up as bob")
        for chat in [alice, bob] {
            try chat.send("/quit")
            #expect(try await chat.exitStatus() == 0)
        }

        for name in ["alice", "bob"] {
            let again = try ChatProcess(url: server.url, settingsFile: nil, home: home, arguments: ["--user", name])
            try await again.line("[connection] connected as \(name)")
            try again.send("/quit")
            #expect(try await again.exitStatus() == 0)
        }
        let unnamed = try ChatProcess(url: server.url, settingsFile: nil, home: home)
        try await unnamed.line("[session] sessions saved for this server: alice, bob; start with --user NAME to resume one")
        try await unnamed.line("[connection] connected, not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        try unnamed.send("/quit")
        #expect(try await unnamed.exitStatus() == 0)

        // A logout forgets that user's session only.
        let leaving = try ChatProcess(url: server.url, settingsFile: nil, home: home, arguments: ["--user", "bob"])
        try leaving.send("/logout")
        try await leaving.line("[ok] logged out")
        try leaving.send("/quit")
        #expect(try await leaving.exitStatus() == 0)
        let alone = try ChatProcess(url: server.url, settingsFile: nil, home: home)
        try await alone.line("[connection] connected as alice")
        try alone.send("/quit")
        #expect(try await alone.exitStatus() == 0)
    }

    /// A certificate that is not trusted, ws:// to the TLS port and wss:// to the plain one
    /// never work however often they are tried: huddle-chat says what to do and exits 2.
    @Test func failuresThatRetryingCannotFixStopWithAHint() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--kdf-iterations", "1000"], tls: certificates)
        let home = try HuddleChatProcessTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        // A plain upgrade on the TLS port is hung up on, as a restarting server may: stopped
        // after a few attempts, where the others stop at the first.
        for (url, hint, attempts) in [
            (server.tlsURL, "--ca FILE trusts its CA, --insecure accepts any certificate", 0),
            ("ws://127.0.0.1:\(server.tlsPort ?? 0)", "as a TLS port does: use wss://", 2),
            ("wss://127.0.0.1:\(server.port)", "the port does not speak TLS: use ws://", 0),
        ] {
            let chat = try ChatProcess(url: url, settingsFile: home.appendingPathComponent("eve.json"))
            let line = try await chat.line("a cannot_connect error for \(url)", timeout: 60) { $0.hasPrefix("[error] cannot_connect: ") }
            #expect(line.contains(hint), "\(line)")
            #expect(try await chat.exitStatus() == 2, "stops by itself, without input ending: \(chat.lines)")
            #expect(chat.lines.filter { $0.hasPrefix("[connection]") }.count == attempts, "\(chat.lines)")
        }
    }

    /// While the server is down the failed attempts are reported at attempts 1, 2, 4, 8…,
    /// each with its count, not one line each (32 lines in 2 minutes before).
    @Test func anOutageIsReportedAtGrowingIntervals() async throws {
        let data = try ServerProcess.makeDataDirectory()
        let home = try HuddleChatProcessTests.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: data)
            try? FileManager.default.removeItem(at: home)
        }
        let server = try await DurableServer.start(dataDirectory: data)
        let chat = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("alice.json"))
        try await chat.line("[connection] connected, not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        #expect(try await server.stop() == 0)
        try await chat.line("attempt 4", timeout: 60) { $0.hasPrefix("[connection] attempt 4 failed (") }
        let shown = chat.lines.filter { $0.hasPrefix("[connection] ") }.dropFirst().map { $0.prefix(while: { $0 != "(" }) }
        #expect(
            shown == ["[connection] lost ", "[connection] attempt 1 failed ", "[connection] attempt 2 failed ", "[connection] attempt 4 failed "],
            "\(chat.lines)")
        try chat.closeInput()
        #expect(try await chat.exitStatus() == 0)
    }

    /// A script's exit status says whether its commands worked: a refused login is 1.
    @Test func aScriptWhoseLoginIsRefusedExitsNonZero() async throws {
        let server = try await startHuddle()
        let home = try HuddleChatProcessTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let signup = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("first.json"))
        try signup.send("/signup alice alice@example.com \(Self.password)")
        try signup.closeInput()
        #expect(try await signup.exitStatus() == 0)
        #expect(signup.lines.contains("[ok] signed up as alice"))

        let script = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("second.json"))
        try script.send("/login alice not-the-password")
        try script.closeInput()
        #expect(try await script.exitStatus() == 1)
        #expect(script.lines.contains { $0.hasPrefix("[error] invalid_credentials") }, "\(script.lines)")
    }

    /// Piped input whose last line is a message: its echo prints before huddle-chat exits.
    @Test func aPipedLastMessageIsShownBeforeExit() async throws {
        let server = try await startHuddle()
        let home = try HuddleChatProcessTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let bob = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("bob.json"))
        try bob.send("/signup bob bob@example.com \(Self.password)")
        try await bob.line("[ok] signed up as bob")
        let alice = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("alice.json"))
        for line in ["/signup alice alice@example.com \(Self.password)", "/add bob"] { try alice.send(line) }
        try await alice.line("[ok] friend request sent to bob")
        try bob.send("/accept alice")
        try await alice.line("[friend] you and bob are now friends")
        for n in 1...3 {
            let script = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("alice.json"))
            for line in ["/chat bob", "last words \(n)"] { try script.send(line) }
            try script.closeInput()
            #expect(try await script.exitStatus() == 0)
            #expect(script.lines.contains("[chat alice~bob #\(n)] alice: last words \(n)"), "\(script.lines)")
        }
        try alice.send("/quit")
        try bob.send("/quit")
        #expect(try await alice.exitStatus() == 0)
        #expect(try await bob.exitStatus() == 0)
    }
}
