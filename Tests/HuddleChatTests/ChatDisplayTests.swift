import Testing
import HuddleClient
@testable import huddle_chat

/// The interactive display: a line arriving while the user types must not garble the input.
@Suite struct ChatDisplayTests {
    final class Screen {
        var writes: [String] = []
    }

    private func display(columns: Int = 80) -> (TerminalDisplay, Screen) {
        let screen = Screen()
        return (TerminalDisplay(columns: { columns }, write: { screen.writes.append($0) }), screen)
    }

    @Test func anEventWhileTypingClearsPrintsAndRedrawsTheInputWithItsCursor() {
        let (display, screen) = display()
        display.setPrompt("alice→bob> ")
        _ = display.feed(Array("see you at 5".utf8))
        _ = display.feed([0x1B, 0x5B, 0x44, 0x1B, 0x5B, 0x44])  // cursor two to the left
        screen.writes = []
        display.show("[chat alice~bob #7] bob: on my way")
        // One write: erase the line, the event and a newline, the prompt and the partial input,
        // then the cursor back where it was.
        #expect(screen.writes == ["\r\u{1B}[2K[chat alice~bob #7] bob: on my way\nalice→bob> see you at 5\u{1B}[2D"])
        #expect(display.editor.line == "see you at 5", "what was typed is untouched")
    }

    @Test func typingRedrawsOnlyTheInputLine() {
        let (display, screen) = display()
        display.setPrompt("> ")
        screen.writes = []
        #expect(display.feed(Array("hi".utf8)) == [.changed, .changed])
        #expect(screen.writes == ["\r\u{1B}[2K> hi"], "one redraw per chunk of input")
        #expect(display.feed([0x0D]) == [.submit("hi")])
        #expect(screen.writes.last == "\r\u{1B}[2K> ")
        screen.writes = []
        _ = display.feed([0x1B, 0x5B])  // half an escape sequence: nothing to redraw yet
        #expect(screen.writes.isEmpty)
    }

    @Test func aLongInputScrollsWithinTheTerminalWidth() {
        let (display, screen) = display(columns: 24)
        display.setPrompt("alice> ")
        _ = display.feed(Array(String(repeating: "x", count: 40).utf8))
        let shown = screen.writes.last ?? ""
        #expect(shown == "\r\u{1B}[2K" + "alice> " + String(repeating: "x", count: 16), "never wider than the terminal: no wrapped, half-erased lines")
    }
}

/// Command lines and output lines.
@Suite struct ChatCommandAndLineTests {
    @Test func argumentsAreWordsAndAMessageTakesTheRestOfTheLine() throws {
        let add = try #require(CommandTable.command(named: "add"))
        #expect(add.usage == "/add USER [message]")
        #expect(add.parse("  bob   coffee at  5?  ") == ["bob", "coffee at  5?"])
        #expect(add.parse(" bob") == ["bob"])
        #expect(add.parse("") == nil)
        let signup = try #require(CommandTable.command(named: "signup"))
        #expect(signup.parse(" alice a@example.com pw-secret-1") == ["alice", "a@example.com", "pw-secret-1"])
        #expect(signup.parse(" alice a@example.com") == nil, "too few")
        #expect(signup.parse(" alice a@example.com pw extra") == nil, "too many")
        #expect(try #require(CommandTable.command(named: "friends")).parse(" ") == [])
        let names = CommandTable.groups.flatMap { $0.commands.map(\.name) }
        #expect(Set(names).count == names.count, "no command listed twice")
    }

    @Test func linesFromOthersCannotDriveTheTerminal() {
        #expect(ChatLines.clean("hi\u{1B}[2J\r\nthere\u{202E}") == "hi\u{FFFD}[2J\u{FFFD}\u{FFFD}there\u{FFFD}")
        #expect(ChatLines.clean("plain ☕ text") == "plain ☕ text")
    }

    @Test func errorLinesNameTheCodeAndWhatToDo() {
        #expect(ChatLines.error(.server(code: "user_not_found", message: "no user dave")) == "[error] user_not_found: no user dave")
        #expect(ChatLines.error(.server(code: "too_many_attempts", message: "too many failed logins; try again later", retryAfterMilliseconds: 61_500))
            == "[error] too_many_attempts: too many failed logins; try again later (try again in 62 s)")
        #expect(ChatLines.error(.server(code: "not_authenticated", message: "sign in first: signup, login or auth"))
            == "[error] not_authenticated: sign in first: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        #expect(ChatLines.error(.timedOut) == "[error] timed_out: no reply from the server in time")
        #expect(ChatLines.reconnecting(attempt: 1, delayMilliseconds: 249, reason: "the server is going away")
            == "[connection] lost (the server is going away); reconnecting in 0.2 s")
        #expect(ChatLines.reconnecting(attempt: 3, delayMilliseconds: 1_949, reason: "connection refused")
            == "[connection] attempt 2 failed (connection refused); next in 1.9 s")
    }

    @Test func connectionLinesNameTheServerAmongSeveral() {
        let bob = HuddleUser(username: "bob", email: "bob@example.com")
        #expect(ChatLines.connected(bob) == "[connection] connected as bob")
        #expect(ChatLines.connected(bob, server: "ws://b:8080/v1") == "[connection] connected to ws://b:8080/v1 as bob")
        #expect(ChatLines.reconnecting(attempt: 1, delayMilliseconds: 120, reason: "the connection dropped", next: "ws://c:8080/v1")
            == "[connection] lost (the connection dropped); reconnecting to ws://c:8080/v1 in 0.1 s")
        #expect(ChatLines.reconnecting(attempt: 2, delayMilliseconds: 0, reason: "connection refused", next: "ws://a:8080/v1")
            == "[connection] attempt 1 failed (connection refused); next to ws://a:8080/v1 in 0.0 s")
    }

    @Test func passwordsAreStarredOutOnScreen() {
        #expect(ChatApp.maskingPassword("/signup alice a@example.com pw-secret-1") == "/signup alice a@example.com ********")
        #expect(ChatApp.maskingPassword("/login alice  pw-secret-1") == "/login alice ********")
        #expect(ChatApp.maskingPassword("/add bob my password is x") == "/add bob my password is x")
    }
}
