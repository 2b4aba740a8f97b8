import HuddleClient
import HuddleProtocol

/// Who huddle-chat is signed in as, and what it follows for that user: the inbox, every
/// friend's chat room and place, and a chat opened by `/chat`.
extension ChatApp {
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
    func followSession(newAccount: Bool = false) {
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
}
