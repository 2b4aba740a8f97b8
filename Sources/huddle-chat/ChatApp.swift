import HuddleClient
import HuddleProtocol

/// huddle-chat itself, confined to its `HuddleClient`'s run loop: it runs the typed
/// commands one at a time (so replies print in command order), turns the client's events into
/// lines, follows the user's inbox and every friend's chat room and place, shows the circle
/// feed as it changes, and keeps the settings file up to date with the session.
final class ChatApp {
    let client: HuddleClient
    let display: any ChatDisplay
    private let store: ChatSessionStore
    /// The signed-in user's settings file (nil while anonymous in a per-user store).
    private var configFile: ChatConfigFile?
    /// The store's mark that this process has the signed-in user's session open.
    private var sessionClaim: Int32 = -1
    private(set) var settings: ChatSettings
    /// The server URL as the settings file records it.
    private let urlText: String
    /// Who is signed in (or, right after start, who the saved token belongs to).
    private(set) var username: String?
    /// The chat room plain text goes to, and its other member.
    private(set) var openRoom: String?
    private(set) var openPartner: String?
    /// Channels subscribed through `follow`.
    private var followed: Set<String> = []
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
    private var unansweredSend: (number: Int, text: String, room: String, done: () -> Void)?
    private var sendNumber = 0
    /// Who is typing in the open room, until when (interactive prompt).
    private var typingUntil: [String: Int64] = [:]
    private let stopLoop: () -> Void
    /// Set when the connection cannot be made for good (exit 2).
    private var connectionFailed = false
    /// An `[error]` line answered a command or a message (exit 1 in line mode).
    private var commandFailed = false
    /// Messages sent whose reply has not come yet.
    private var unconfirmedSends = 0
    /// Per room, this device's newest message whose publication is not shown yet, and the
    /// newest offset shown: at end of input the echoes are waited for, not cut off.
    private var awaitedEchoes: [String: UInt64] = [:]
    private var shownOffsets: [String: UInt64] = [:]
    /// The server was reached in this run; until then, how many attempts in a row were hung
    /// up on (the wrong scheme, or a restart).
    private var everConnected = false
    private var hangUpsInARow = 0
    /// Input ended and the last command ran: quitting once what was sent is answered.
    private var finishing = false

    /// The newest post known, to show the ones that came while disconnected.
    private var feedCatchUp = FeedCatchUp()
    /// Where each followed friend was last shown to be, so a resumed subscription's report of
    /// the same place is not shown again.
    private var placeShown: [String: Whereabouts] = [:]
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
    private func finishWhenAnswered() {
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

    // MARK: Session

    /// The signed-in user's name, or an error line and nil.
    func requireSignIn() -> String? {
        if let username { return username }
        show("[error] not_signed_in: sign in first: /signup USER EMAIL PASSWORD or /login USER PASSWORD")
        return nil
    }

    /// A signup or login succeeded: remember the session and follow the user's channels.
    /// `newAccount`: the account was made just now, so everything in its inbox is news.
    func signedIn(_ session: HuddleSession, newAccount: Bool = false) {
        let name = session.user.username
        // In a per-user store the user's own file, with where their inbox was read up to.
        let file = store.file(for: name)
        let previous = file?.path == configFile?.path ? settings : ((try? file?.load()) ?? nil) ?? ChatSettings()
        let sameUser = previous.username == name
        configFile = file
        store.release(sessionClaim)
        sessionClaim = store.claim(name)
        settings = ChatSettings(
            url: urlText, username: name, token: session.token ?? previous.token,
            inboxEpoch: sameUser ? previous.inboxEpoch : nil, inboxOffset: sameUser ? previous.inboxOffset : nil)
        saveSettings()
        username = name
        followed = []
        openRoom = nil
        openPartner = nil
        resetCircle()
        updatePrompt()
        followSession(newAccount: newAccount)
    }

    /// Logged out (or the session was refused): forget the session.
    func signedOut() {
        settings = ChatSettings(url: urlText)
        if store.isPerServer {
            configFile?.remove()
            configFile = store.file(for: nil)
            store.release(sessionClaim)
            sessionClaim = -1
        } else {
            saveSettings()
        }
        username = nil
        followed = []
        openRoom = nil
        openPartner = nil
        typingUntil = [:]
        resetCircle()
        updatePrompt()
    }

    /// Follows the user's inbox (from where the last run stopped, so notices that came while
    /// away are shown), every friend's room and place, and shows what is unread.
    private func followSession(newAccount: Bool = false) {
        guard let me = username else { return }
        var since: Position?
        if let epoch = settings.inboxEpoch, let offset = settings.inboxOffset { since = Position(epoch: epoch, offset: offset) }
        follow("inbox:\(me)", since: since) { [unowned self] subscription in
            // The first run starts the record here (even at offset 0): notices that come
            // while huddle-chat is not running are shown on its next start.
            guard username == me, settings.inboxOffset == nil else { return }
            settings.inboxEpoch = subscription.epoch
            settings.inboxOffset = subscription.offset
            saveSettings()
            // A new account's inbox may already hold notices sent between the signup's reply and
            // this subscription (a friend quick off the mark): they are news, show them.
            if newAccount, subscription.offset > 0 { showNewAccountsFirstNotices(upTo: subscription.offset) }
        }
        client.friends { [unowned self] outcome in
            guard username == me, case .success(let friends) = outcome else { return }
            for friend in friends { followFriend(friend.username) }
        }
        client.feed(limit: 1) { [unowned self] outcome in
            guard username == me, case .success(let page) = outcome else { return }
            feedCatchUp.baseline(page.posts.first?.id)
        }
        client.unread { [unowned self] outcome in
            guard username == me, case .success(let summary) = outcome, summary.total > 0 else { return }
            show(unreadLine(summary, me: me))
        }
    }

    /// Subscribes to `channel` once per session; its publications then print live.
    func follow(_ channel: String, since: Position? = nil, subscribed: ((SubscribeResult) -> Void)? = nil) {
        guard !followed.contains(channel) else { return }
        followed.insert(channel)
        client.subscribe(channel, since: since) { [unowned self] outcome in
            switch outcome {
            case .success(let result):
                subscribed?(result)
            case .failure(let error):
                followed.remove(channel)
                // A stopped client has said why already (a refused session: signed out).
                if error != .closed { display.show(ChatLines.error(error)) }
            }
        }
    }

    /// A friend's chat room, and their place: `[place] bob is at work` lines as it changes.
    func followFriend(_ friend: String) {
        guard let me = username else { return }
        follow(ChatRoom.name(me, friend))
        follow(LocationChannel.name(friend))
    }

    /// Stops following `channel` (a former friend's place: the server ended that subscription).
    func unfollow(_ channel: String) {
        guard followed.remove(channel) != nil else { return }
        client.unsubscribe(channel) { _ in }  // "not_subscribed" when the server ended it first: the same
    }

    /// `/chat USER`: follows the room, shows its recent history, marks it read, and sends
    /// plain text there from now on.
    func openChat(with user: String, done: @escaping () -> Void) {
        guard let me = requireSignIn() else { return done() }
        let partner = user.lowercased()
        guard partner != me else {
            show("[error] self_chat: you cannot chat with yourself")
            return done()
        }
        client.friends { [unowned self] outcome in
            switch outcome {
            case .failure(let error):
                show(ChatLines.error(error))
                done()
            case .success(let friends) where !friends.contains(where: { $0.username == partner }):
                show("[error] not_friends: you and \(ChatLines.clean(partner)) are not friends (/add \(ChatLines.clean(partner)) asks)")
                done()
            case .success:
                let room = ChatRoom.name(me, partner)
                follow(room)
                client.history(room, limit: Self.historyShown) { [unowned self] outcome in
                    switch outcome {
                    case .failure(let error):
                        show(ChatLines.error(error))
                    case .success(let page):
                        openRoom = room
                        openPartner = partner
                        typingUntil = [:]
                        updatePrompt()
                        let count = page.offset == 1 ? "1 message" : "\(page.offset) messages"
                        show("[chat] chatting with \(partner) in \(room) (\(count), the last \(page.publications.count) below); type to send")
                        for publication in page.publications.reversed() { show(ChatLines.history(publication)) }
                        if page.offset > 0 { client.markRead(room, offset: page.offset) { _ in } }
                    }
                    done()
                }
            }
        }
    }

    func unreadLine(_ summary: UnreadSummary, me: String) -> String {
        guard summary.total > 0 else { return "[unread] nothing unread" }
        let rooms = summary.rooms.filter { $0.unread > 0 }.map { room in
            "\(ChatLines.clean(ChatRoom.partner(in: room.channel, for: me) ?? room.channel)) \(room.unread)"
        }
        return "[unread] \(summary.total) unread: " + rooms.joined(separator: ", ")
    }

    // MARK: Events

    private func handle(_ event: HuddleEvent) {
        switch event {
        case .publication(let publication):
            received(publication)
        case .presence(let user, let online, _):
            show("[presence] \(ChatLines.clean(user)) is \(online ? "online" : "offline")")
        case .typing(let channel, let user, _):
            if display.isInteractive {
                guard channel == openRoom else { return }
                typingUntil[user] = ClientRunLoop.milliseconds() + Self.typingShownFor
                updatePrompt()
                client.runLoop.schedule(after: Self.typingShownFor + 50) { [weak self] in self?.updatePrompt() }
            } else {
                show("[typing] \(ChatLines.clean(user)) is typing in \(ChatLines.clean(channel))")
            }
        case .connected(let user, let resumed):
            everConnected = true
            show(ChatLines.connected(user))
            if let user, user.username != username {
                signedIn(HuddleSession(user: user, token: nil, expiresAt: 0))
            } else if resumed {
                showPostsMissedWhileAway()
            }
        case .feed(let change):
            guard let me = username else { return }
            if case .posted(let post) = change { feedCatchUp.saw(post.id) }
            show(ChatLines.feedEvent(change, me: me))
        case .whereabouts(let whereabouts):
            // A friend's place as a (re)subscribe found it: news only when it is not what was shown.
            guard whereabouts.since != nil, placeShown[whereabouts.user] != whereabouts else { return }
            placeShown[whereabouts.user] = whereabouts
            show("[place] " + ChatLines.whereabouts(whereabouts, me: username))
        case .memory(let change, _):
            if !memoryEchoes.isEcho(change) { show(ChatLines.memoryChange(change)) }
        case .reconnecting(let attempt, let delay, let reason):
            hangUpsInARow = ConnectionTrouble.isHangUp(reason) ? hangUpsInARow + 1 : 0
            if let trouble = ConnectionTrouble(reason: reason)
                ?? (everConnected ? nil : ConnectionTrouble(hangUpsInARow: hangUpsInARow, secure: client.configuration.url.isSecure))
            {
                display.show("[error] cannot_connect: \(ChatLines.clean(reason)); \(trouble.hint)")
                connectionFailed = true
                return quit()
            }
            // The first failure, then at attempts 1, 2, 4, 8…: a long outage prints a few lines.
            let failedReconnects = attempt - 1
            if failedReconnects == 0 || failedReconnects & (failedReconnects - 1) == 0 {
                show(ChatLines.reconnecting(attempt: attempt, delayMilliseconds: delay, reason: reason))
            }
            if let waiting = unansweredSend {
                unansweredSend = nil
                show(ChatLines.pending(waiting.text, in: waiting.room))
                waiting.done()
            }
        case .recovered(let channel, let recovered):
            if !recovered { show(ChatLines.notRecovered(channel)) }
        case .subscriptionEnded(let channel, let error):
            followed.remove(channel)
            show(ChatLines.subscriptionEnded(channel, error))
        case .stopped(.requested):
            break
        case .stopped(.authenticationFailed(let code, let message)):
            display.show("[error] \(ChatLines.clean(code)): \(ChatLines.clean(message)); sign in again: /login USER PASSWORD")
            signedOut()
            client.start()  // anonymous now, ready for /login or /signup
        case .stopped(let reason):
            display.show("[error] connection_stopped: \(ChatLines.clean(reason.description))")
            connectionFailed = true
            quit()
        case .other(let name, let message):
            show("[event \(ChatLines.clean(name))] \(ChatLines.clean(JSONWriter.serialize(message)))")
        }
    }

    /// The notices a new account's inbox got before it was followed, oldest first, as if they
    /// had come live (a new account's inbox is short: one page holds them).
    private func showNewAccountsFirstNotices(upTo offset: UInt64) {
        guard let me = username else { return }
        client.history("inbox:\(me)", before: offset + 1, limit: 100) { [unowned self] outcome in
            guard username == me, case .success(let page) = outcome else { return }
            for publication in page.publications.reversed() where publication.offset <= offset {
                received(publication)
            }
        }
    }

    private func received(_ publication: ChannelPublication) {
        defer { echoShown(publication) }
        guard let me = username else { return show(ChatLines.publication(publication)) }
        if publication.channel == "inbox:\(me)" {
            // Never backwards: a new account's first notices are shown after later live ones.
            if settings.inboxEpoch != publication.epoch || publication.offset > settings.inboxOffset ?? 0 {
                settings.inboxEpoch = publication.epoch
                settings.inboxOffset = publication.offset
                saveSettings()
            }
            guard let notice = InboxNotice(publication) else { return show(ChatLines.publication(publication)) }
            show(ChatLines.notice(notice, me: me))
            switch notice {
            case .friendAccepted(let from, let to):
                followFriend(from == me ? to : from)
            case .friendRemoved(let user, let friend):
                let other = user == me ? friend : user
                unfollow(LocationChannel.name(other))
                placeShown[other] = nil
            default:
                break
            }
            return
        }
        if let whereabouts = Whereabouts(publication) {
            placeShown[whereabouts.user] = whereabouts
            return show("[place] " + ChatLines.whereabouts(whereabouts, me: me))
        }
        show(ChatLines.publication(publication))
        if publication.channel == openRoom, let from = publication.from, from != me {
            typingUntil[from] = nil
            updatePrompt()
            client.markRead(publication.channel, offset: publication.offset) { _ in }
        }
    }

    /// Notes the room's newest offset shown, and quits if that was the last echo awaited.
    private func echoShown(_ publication: ChannelPublication) {
        guard publication.channel.hasPrefix("chat:") else { return }
        shownOffsets[publication.channel] = max(shownOffsets[publication.channel] ?? 0, publication.offset)
        if let awaited = awaitedEchoes[publication.channel], publication.offset >= awaited {
            awaitedEchoes[publication.channel] = nil
            if finishing { finishWhenAnswered() }
        }
    }

    // MARK: Circle

    private func resetCircle() {
        feedCatchUp.reset()
        placeShown = [:]
        feedMoreBefore = nil
    }

    /// Back after a drop: feed events sent meanwhile are lost, so the posts among them are
    /// read from the feed and shown as if live (likes and comments: `/feed` has the counts).
    private func showPostsMissedWhileAway() {
        guard let me = username, feedCatchUp.begin() else { return }
        client.feed { [unowned self] outcome in
            guard username == me else { return }
            switch outcome {
            case .success(let page):
                let (missed, more) = feedCatchUp.finish(page)
                for post in missed { show(ChatLines.post(post)) }
                if more { show("[feed] more posts came while you were away: /feed lists them") }
            case .failure:
                feedCatchUp.abandon()
            }
        }
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

    private func updatePrompt() {
        let now = ClientRunLoop.milliseconds()
        typingUntil = typingUntil.filter { $0.value > now }
        display.setPrompt(currentPrompt)
    }

    private func saveSettings() {
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
