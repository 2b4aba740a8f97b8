import ChildProcessExit
import Foundation
import Testing

/// huddle-chat as scripts and people use it (issue 7, acceptance 1): real processes in their
/// line mode against the real server.
@Suite(.ownThread) struct HuddleChatProcessTests {
    /// Command arguments are words: a password without spaces.
    static let password = "correct-horse-battery"

    /// `[chat alice~bob #12] alice: hello` → (12, "alice: hello").
    static func chatMessage(_ line: String) -> (offset: Int, text: String)? {
        let prefix = "[chat alice~bob #"
        guard line.hasPrefix(prefix), let close = line.firstIndex(of: "]") else { return nil }
        guard let offset = Int(line[line.index(line.startIndex, offsetBy: prefix.count)..<close]) else { return nil }
        return (offset, String(line[line.index(close, offsetBy: 2)...]))
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-chat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Two huddle-chat processes sign up, befriend and chat; the server is killed (-9) in the
    /// middle of the conversation, with messages in flight and typed while it is down, and
    /// restarted. A message typed while down shows as pending at once and the next command runs
    /// without waiting for it. Both print every message exactly once, in the same order,
    /// numbered 1…20.
    @Test func twoClientsBefriendAndChatAcrossAServerRestart() async throws {
        let data = try ServerProcess.makeDataDirectory()
        let home = try Self.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: data)
            try? FileManager.default.removeItem(at: home)
        }
        var server = try await DurableServer.start(dataDirectory: data)
        let proxy = try TCPProxy(targetPort: server.port)
        defer { proxy.stop() }
        let alice = try ChatProcess(url: proxy.url, settingsFile: home.appendingPathComponent("alice.json"))
        let bob = try ChatProcess(url: proxy.url, settingsFile: home.appendingPathComponent("bob.json"))

        try alice.send("/signup alice alice@example.com \(Self.password)")
        try bob.send("/signup bob bob@example.com \(Self.password)")
        try await alice.line("[ok] signed up as alice")
        try await bob.line("[ok] signed up as bob")
        try alice.send("/add bob coffee?")
        try await alice.line("[ok] friend request sent to bob")
        try await bob.line(#"[friend-request] from alice: "coffee?" (/accept alice or /decline alice)"#)
        try bob.send("/accept alice")
        try await bob.line("[ok] accepted alice's request")
        try await alice.line("[friend] you and bob are now friends")
        try alice.send("/chat bob")
        try bob.send("/chat alice")
        try await alice.line("/chat opened") { $0.hasPrefix("[chat] chatting with bob in chat:alice~bob") }
        try await bob.line("/chat opened") { $0.hasPrefix("[chat] chatting with alice in chat:alice~bob") }

        func messages(_ chat: ChatProcess) -> [(offset: Int, text: String)] { chat.lines.compactMap(Self.chatMessage) }
        func waitForMessages(_ count: Int) async throws {
            for chat in [alice, bob] {
                try await eventually(timeout: 60, "\(count) messages") { messages(chat).count >= count }
            }
        }

        for n in 1...5 {
            try alice.send("alice says \(n)")
            try bob.send("bob says \(n)")
        }
        try await waitForMessages(10)
        // Mid-conversation: sent just before the kill, and typed while the server is down.
        try alice.send("alice says 6")
        try bob.send("bob says 6")
        server.kill9()
        try await alice.line("the lost connection") { $0.hasPrefix("[connection] lost") }
        try alice.send("alice says 7")
        try bob.send("bob says 7")
        try await alice.line("[pending chat alice~bob] alice says 7 (sent when the connection is back)")
        try alice.send("/help")
        try await alice.line("the next command, at once") { $0.contains("this list") }
        server = try await DurableServer.start(dataDirectory: data)
        proxy.setTarget(server.port)
        for n in 8...10 {
            try alice.send("alice says \(n)")
            try bob.send("bob says \(n)")
        }
        try await waitForMessages(20)
        // A last line as a marker: a stray duplicate (a resume replaying something already shown)
        // would be shown before it.
        let marker = "alice: the end"
        try alice.send("the end")
        for chat in [alice, bob] {
            try await eventually(timeout: 60, "the marker") { messages(chat).contains { $0.text == marker } }
            #expect(messages(chat).last?.text == marker, "nothing after the marker")
        }
        func conversation(_ chat: ChatProcess) -> [(offset: Int, text: String)] { messages(chat).filter { $0.text != marker } }

        let expected = Set((1...10).flatMap { ["alice: alice says \($0)", "bob: bob says \($0)"] })
        let seenByAlice = conversation(alice)
        for (chat, name) in [(alice, "alice"), (bob, "bob")] {
            let seen = conversation(chat)
            #expect(seen.map(\.offset) == Array(1...20), "numbered 1…20 in order, none twice: \(seen)")
            #expect(Set(seen.map(\.text)) == expected && seen.count == 20, "every message exactly once")
            #expect(seen.map(\.text) == seenByAlice.map(\.text), "the same conversation on both sides")
            #expect(chat.lines.contains("[connection] connected as \(name)"), "signed in again after the restart")
            #expect(!chat.lines.contains { $0.hasPrefix("[error]") || $0.hasPrefix("[warning]") }, "\(chat.lines.filter { $0.hasPrefix("[error]") || $0.hasPrefix("[warning]") })")
        }
        // Each side's own messages come after the other's in the order sent.
        for name in ["alice", "bob"] {
            let own = seenByAlice.map(\.text).filter { $0.hasPrefix("\(name):") }
            #expect(own == (1...10).map { "\(name): \(name) says \($0)" })
        }
        try alice.send("/quit")
        try bob.closeInput()
        #expect(try await alice.exitStatus() == 0)
        #expect(try await bob.exitStatus() == 0)
        #expect(try await server.stop() == 0)
    }

    /// The session is kept in a 0600 file and the next start is signed in; every server
    /// error and every misuse gets a clear line; a refused saved session says so and leaves
    /// the client ready for /login.
    @Test func sessionFileErrorsAndARefusedSession() async throws {
        let server = try await startHuddle()
        let home = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let settings = home.appendingPathComponent("config/chat.json")

        let first = try ChatProcess(url: server.url, settingsFile: settings)
        try first.send("/whoami")
        try await first.line("[ok] not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        try first.send("/friends")
        try await first.line("[error] not_signed_in: sign in first: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        try first.send("/signup alice alice@example.com short")
        try await first.line("[error] weak_password: a password is 8–128 characters and not the username")
        try first.send("/signup alice alice@example.com \(Self.password)")
        try await first.line("[ok] signed up as alice")
        for (command, answer) in [
            ("/add nobody", "[error] user_not_found: no user nobody"),
            ("/add alice", "[error] self_request: you cannot befriend yourself"),
            ("/chat", "[error] usage: /chat USER"),
            ("/chat bob", "[error] not_friends: you and bob are not friends (/add bob asks)"),
            ("/signup carol carol@example.com \(Self.password)", "[error] already_authenticated: this connection is signed in already (/logout first to switch users)"),
            ("/bogus", "[error] unknown_command: /bogus (/help lists the commands)"),
            ("hello?", "[error] no_chat: open a chat first: /chat USER"),
            ("/search zzz", #"[search] nobody's name starts with "zzz""#),
        ] {
            let before = first.lines.count
            try first.send(command)
            try await first.line(answer, after: before)
        }
        try first.closeInput()
        #expect(try await first.exitStatus() == 1, "a script with failed commands says so")

        let attributes = try FileManager.default.attributesOfItem(atPath: settings.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "the token is for the user's eyes only")
        let saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: settings)) as? [String: Any])
        #expect(saved["username"] as? String == "alice" && (saved["token"] as? String)?.count == 43 && saved["url"] as? String == server.url)

        let second = try ChatProcess(url: server.url, settingsFile: settings)
        try await second.line("[connection] connected as alice")
        try second.send("/whoami")
        try await second.line("whoami") { $0.hasPrefix("[ok] alice <alice@example.com>, session valid until ") }
        try second.send("/logout")
        try await second.line("[ok] logged out")
        try await second.line("[connection] connected, not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        try second.closeInput()
        #expect(try await second.exitStatus() == 0)
        let afterLogout = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: settings)) as? [String: Any])
        #expect(afterLogout["token"] == nil && afterLogout["username"] == nil)

        // A saved token the server refuses (revoked, expired): said once, then anonymous.
        try Data(#"{"url": "\#(server.url)", "username": "alice", "token": "\#(String(repeating: "x", count: 43))"}"#.utf8).write(to: settings)
        let third = try ChatProcess(url: server.url, settingsFile: settings)
        try await third.line("[error] invalid_token: unknown or revoked token; sign in again: /login USER PASSWORD")
        try await third.line("[connection] connected, not signed in: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        try third.send("/login alice \(Self.password)")
        try await third.line("[ok] logged in as alice")
        try third.send("/quit")
        #expect(try await third.exitStatus() == 0)
    }

    /// wss:// with `--ca` (the test CA) or `--insecure` (without either: HuddleChatScriptProcessTests).
    @Test func secureConnections() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--kdf-iterations", "1000"], tls: certificates)
        let home = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        for (name, arguments) in [("carol", ["--ca", certificates.caCertificate.path]), ("dave", ["--insecure"])] {
            let chat = try ChatProcess(url: server.tlsURL, settingsFile: home.appendingPathComponent("\(name).json"), arguments: arguments)
            try chat.send("/signup \(name) \(name)@example.com \(Self.password)")
            try await chat.line("[ok] signed up as \(name)")
            try chat.send("/quit")
            #expect(try await chat.exitStatus() == 0)
        }
        let missing = try ChatProcess(url: server.tlsURL, settingsFile: home.appendingPathComponent("eve.json"), arguments: ["--ca", "/nonexistent.pem"])
        #expect(try await missing.exitStatus() != 0, "an unreadable --ca is refused up front")
    }

    /// Friend notices that came while huddle-chat was not running are shown on its next start
    /// (the inbox resumes from the position saved in the settings file).
    @Test func noticesThatCameWhileAwayAreShownOnTheNextStart() async throws {
        let server = try await startHuddle()
        let home = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let bobSettings = home.appendingPathComponent("bob.json")
        let bob = try ChatProcess(url: server.url, settingsFile: bobSettings)
        try bob.send("/signup bob bob@example.com \(Self.password)")
        try await bob.line("[ok] signed up as bob")
        try await eventually(timeout: 10, "the inbox position saved") {
            ((try? String(contentsOf: bobSettings, encoding: .utf8)) ?? "").contains("inbox_offset")
        }
        try bob.send("/quit")
        #expect(try await bob.exitStatus() == 0)

        let alice = try ChatProcess(url: server.url, settingsFile: home.appendingPathComponent("alice.json"))
        try alice.send("/signup alice alice@example.com \(Self.password)")
        try alice.send("/add bob are you there?")
        try await alice.line("[ok] friend request sent to bob")

        let bobAgain = try ChatProcess(url: server.url, settingsFile: bobSettings)
        try await bobAgain.line(#"[friend-request] from alice: "are you there?" (/accept alice or /decline alice)"#)
        try bobAgain.send("/quit")
        #expect(try await bobAgain.exitStatus() == 0)
        try alice.send("/quit")
        #expect(try await alice.exitStatus() == 0)
    }
}
