import HuddleClient
import HuddleProtocol

/// The client's events as huddle-chat shows them: connection changes, publications of the
/// followed channels (messages, notices, places), typing, the circle feed and memories.
extension ChatApp {
    /// The server the client is on (or tries next), worth naming only among several.
    var serverShown: String? {
        client.configuration.urls.count > 1 ? client.currentURL.description : nil
    }

    func handle(_ event: HuddleEvent) {
        switch event {
        case .publication(let publication):
            received(publication)
        case .publicationRemoved(let channel, _, let offset, _):
            show(ChatLines.removed(channel: channel, offset: offset))
        case .profile(let user, let profile, _):
            show(ChatLines.profile(user: user, profile))
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
            show(ChatLines.connected(user, server: serverShown))
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
                show(ChatLines.reconnecting(attempt: attempt, delayMilliseconds: delay, reason: reason, next: serverShown))
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
    func showNewAccountsFirstNotices(upTo offset: UInt64) {
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

    func resetCircle() {
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
}
