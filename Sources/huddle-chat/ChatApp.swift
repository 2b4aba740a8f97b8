import HuddleClient
import HuddleProtocol

/// huddle-chat itself, confined to its `HuddleClient`'s run loop: it runs the typed
/// commands one at a time (so replies print in command order), turns the client's events into
/// lines, follows the user's inbox and every friend's chat room and place, shows the circle
/// feed as it changes, and keeps the settings file up to date with the session.
final class ChatApp {
    let client: HuddleClient
    let display: any ChatDisplay
    let store: ChatSessionStore
    /// The signed-in user's settings file (nil while anonymous in a per-user store).
    var configFile: ChatConfigFile?
    /// The store's mark that this process has the signed-in user's session open.
    var sessionClaim: Int32 = -1
    var settings: ChatSettings
    /// The server URL as the settings file records it.
    let urlText: String
    /// Who is signed in (or, right after start, who the saved token belongs to).
    var username: String?
    /// The chat room plain text goes to, and its other member.
    var openRoom: String?
    var openPartner: String?
    /// Channels subscribed through `follow`.
    var followed: Set<String> = []
    /// Lines typed and not run yet; one command runs at a time.
    private var waitingLines: [String] = []
    private var busy = false
    private var inputEnded = false
    private var quitting = false
    /// Bytes of a line not finished yet (non-interactive input).
    private var partialLine: [UInt8] = []
    private var lastTypingSent: Int64 = 0
    /// The chat message the command queue waits for, until its reply or a drop (then it is
    /// pending in the client's outbox and the queue moves on).
    var unansweredSend: (number: Int, text: String, room: String, done: () -> Void)?
    private var sendNumber = 0
    /// Who is typing in the open room, until when (interactive prompt).
    var typingUntil: [String: Int64] = [:]
    private let stopLoop: () -> Void
    /// Set when the connection cannot be made for good (exit 2).
    var connectionFailed = false
    /// An `[error]` line answered a command or a message (exit 1 in line mode).
    private var commandFailed = false
    /// Messages sent whose reply has not come yet.
    private var unconfirmedSends = 0
    /// Per room, this device's newest message whose publication is not shown yet, and the
    /// newest offset shown: at end of input the echoes are waited for, not cut off.
    var awaitedEchoes: [String: UInt64] = [:]
    var shownOffsets: [String: UInt64] = [:]
    /// The server was reached in this run; until then, how many attempts in a row were hung
    /// up on (the wrong scheme, or a restart).
    var everConnected = false
    var hangUpsInARow = 0
    /// Input ended and the last command ran: quitting once what was sent is answered.
    var finishing = false

    /// The newest post known, to show the ones that came while disconnected.
    var feedCatchUp = FeedCatchUp()
    /// Where each followed friend was last shown to be, so a resumed subscription's report of
    /// the same place is not shown again.
    var placeShown: [String: Whereabouts] = [:]
    /// The `before` of the next `/feed more` page; nil when the last page was shown (or none yet).
    var feedMoreBefore: UInt64?
    /// The memory changes this device's commands made, whose events are not shown again.
    var memoryEchoes = MemoryEchoes()

    /// Typing notices go out at most this often while the user types.
    static let typingInterval: Int64 = 3_000
    /// How long "X is typing" stays in the prompt without a new notice.
    static let typingShownFor: Int64 = 5_000
    /// Messages of history shown when a chat is opened.
    static let historyShown = 20
    /// A non-interactive input line longer than this is dropped (memory stays bounded).
    static let maxLineBytes = 64 * 1024
    /// At end of input, how long messages sent are waited for (their reply and echo).
    static let answersAwaitedMilliseconds: Int64 = 10_000

    /// 0 done, 1 a command or message failed (line mode), 2 the connection failed for good.
    var exitStatus: Int32 {
        if connectionFailed { return 2 }
        return commandFailed && !display.isInteractive ? 1 : 0
    }

    init(
        client: HuddleClient, display: any ChatDisplay, store: ChatSessionStore, configFile: ChatConfigFile?, settings: ChatSettings,
        urlText: String, signedInAs username: String?, stopLoop: @escaping () -> Void
    ) {
        self.client = client
        self.display = display
        self.store = store
        self.configFile = configFile
        self.settings = settings
        self.urlText = urlText
        self.username = username
        self.stopLoop = stopLoop
    }

    func start() {
        client.onEvent = { [unowned self] event in handle(event) }
        updatePrompt()
        client.start()
        if let username {
            sessionClaim = store.claim(username)
            followSession()
        }
    }

    // MARK: Input

    /// Bytes from a non-interactive stdin: one command per line.
    func receivedLines(_ bytes: [UInt8]) {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                var line = partialLine
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                partialLine = []
                enqueue(String(decoding: line, as: UTF8.self))
            } else if partialLine.count < Self.maxLineBytes {
                partialLine.append(byte)
            }
        }
    }

    /// Bytes from the terminal in raw mode, through the line editor.
    func receivedKeys(_ bytes: [UInt8], on terminal: TerminalDisplay) {
        for action in terminal.feed(bytes) {
            switch action {
            case .submit(let line):
                guard !line.trimmed.isEmpty else { continue }
                // Commands stay on screen above the prompt; a message shows once delivered.
                if line.trimmed.hasPrefix("/") { terminal.show(currentPrompt + ChatLines.clean(Self.maskingPassword(line.trimmed))) }
                enqueue(line)
            case .interrupt, .endOfInput:
                quit()
            case .changed:
                userIsTyping(terminal.editor.line)
            }
        }
    }

    /// `line` with the password of `/signup` and `/login` starred out, for the screen.
    static func maskingPassword(_ line: String) -> String {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        guard let name = words.first, ["/signup", "/login"].contains(name.lowercased()), words.count == (name.lowercased() == "/signup" ? 4 : 3)
        else { return line }
        return (words.dropLast().map(String.init) + ["********"]).joined(separator: " ")
    }

    /// Standard input ended: quit once the commands already read have run.
    func inputDidEnd() {
        if !partialLine.isEmpty {
            enqueue(String(decoding: partialLine, as: UTF8.self))
            partialLine = []
        }
        inputEnded = true
        runWaitingLines()
    }

    private func enqueue(_ line: String) {
        guard !line.trimmed.isEmpty else { return }
        waitingLines.append(line)
        runWaitingLines()
    }

    /// Runs waiting lines one after the other: a command that finishes at once lets the next
    /// run in this same loop (no recursion however long the script).
    private func runWaitingLines() {
        while !busy, !quitting, !waitingLines.isEmpty {
            let line = waitingLines.removeFirst()
            busy = true
            var returned = false
            var finishedEarly = false
            execute(line) { [unowned self] in
                busy = false
                if returned { runWaitingLines() } else { finishedEarly = true }
            }
            returned = true
            if !finishedEarly { return }
        }
        if inputEnded && !busy && waitingLines.isEmpty { finishWhenAnswered() }
    }

    /// Quits once every message sent has its reply and its echo shown (a piped last message
    /// prints like the others), or after `answersAwaitedMilliseconds`; a message still without
    /// a reply then is an error (it may not have been stored).
    func finishWhenAnswered() {
        guard !quitting else { return }
        if unconfirmedSends == 0 && awaitedEchoes.isEmpty { return quit() }
        guard !finishing else { return }
        finishing = true
        client.runLoop.schedule(after: Self.answersAwaitedMilliseconds) { [weak self] in
            guard let self, !quitting else { return }
            if unconfirmedSends > 0 {
                let count = unconfirmedSends == 1 ? "1 message" : "\(unconfirmedSends) messages"
                show("[error] unconfirmed: \(count) without a reply from the server \(Self.answersAwaitedMilliseconds / 1000) s after the end of input; not known to be sent")
            }
            quit()
        }
    }

    private func execute(_ line: String, done: @escaping () -> Void) {
        let text = line.trimmed
        if text.hasPrefix("/") && !text.hasPrefix("//") {
            let name = text.dropFirst().prefix { $0 != " " && $0 != "\t" }
            guard let command = CommandTable.command(named: String(name).lowercased()) else {
                show("[error] unknown_command: /\(ChatLines.clean(String(name))) (/help lists the commands)")
                return done()
            }
            guard let arguments = command.parse(text.dropFirst(1 + name.count)) else {
                show(ChatLines.usage(command.usage))
                return done()
            }
            command.run(self, arguments, done)
        } else {
            // "//text" sends "/text".
            send(text.hasPrefix("//") ? String(text.dropFirst()) : line, done: done)
        }
    }

    // MARK: Sending

    private func send(_ text: String, done: @escaping () -> Void) {
        guard requireSignIn() != nil else { return done() }
        guard let room = openRoom else {
            show("[error] no_chat: open a chat first: /chat USER")
            return done()
        }
        // The client's outbox keeps the message, with a generated client id, until the server
        // answers — across reconnects, however long the outage — and it is stored once. Typed
        // while disconnected, or caught by a drop before its reply, it is shown as pending and
        // the next command runs; it shows as a message when its publication comes back.
        sendNumber += 1
        let number = sendNumber
        unconfirmedSends += 1
        client.publish(room, data: .object([("text", .string(text))])) { [unowned self] outcome in
            unconfirmedSends -= 1
            switch outcome {
            case .failure(let error):
                show(ChatLines.error(error))
            case .success(let result):
                if followed.contains(room), result.offset > shownOffsets[room] ?? 0, result.offset > awaitedEchoes[room] ?? 0 {
                    awaitedEchoes[room] = result.offset
                }
            }
            if finishing { finishWhenAnswered() }
            if let waiting = unansweredSend, waiting.number == number {
                unansweredSend = nil
                done()
            }
        }
        if client.state == .ready {
            unansweredSend = (number, text, room, done)
        } else {
            show(ChatLines.pending(text, in: room))
            done()
        }
    }

    private func userIsTyping(_ text: String) {
        guard let room = openRoom, !text.isEmpty, !text.hasPrefix("/") else { return }
        let now = ClientRunLoop.milliseconds()
        guard now - lastTypingSent >= Self.typingInterval else { return }
        lastTypingSent = now
        client.typing(in: room) { _ in }  // best effort: a lost typing notice is no loss
    }

    // MARK: Output

    /// Shows a line answering a command or a message (an `[error]` one counts for the exit
    /// status); lines about the connection and the session go to `display` directly.
    func show(_ line: String) {
        if line.hasPrefix("[error]") { commandFailed = true }
        display.show(line)
    }

    private var currentPrompt: String {
        guard let me = username else { return "> " }
        let now = ClientRunLoop.milliseconds()
        let typing = typingUntil.filter { $0.value > now }.keys.sorted()
        let who = openPartner.map { "\(me)→\($0)" } ?? me
        return (typing.isEmpty ? "" : "(\(typing.joined(separator: ", ")) typing) ") + who + "> "
    }

    func updatePrompt() {
        let now = ClientRunLoop.milliseconds()
        typingUntil = typingUntil.filter { $0.value > now }
        display.setPrompt(currentPrompt)
    }

    func saveSettings() {
        guard let configFile else { return }
        do {
            try configFile.save(settings)
        } catch {
            show("[warning] cannot save settings: \(error)")
        }
    }

    /// Closes the connection and ends the program after this loop turn (which sends the close frame).
    func quit() {
        guard !quitting else { return }
        quitting = true
        client.stop()
        display.close()
        stopLoop()
    }
}

extension String {
    var trimmed: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
