/// Push hand-off (protocol.md, "Notifications and push"): what is owed to a user with no live
/// connection becomes a `pushNotification` output, which the server hands to its webhook.
///
/// "No live connection" is the registry's view, without the presence grace period: a phone the
/// system suspended a moment ago has no socket to hear on, so it is told through the push
/// gateway at once. A user online on any device is told live instead and gets no push — in
/// cluster mode on any node: another node's word includes its grace period (the nodes tell
/// each other of presence, not of sockets), so there a push waits out that grace.
///
/// Nothing here is durable or logged: what a notification tells of already is — the chat
/// message in its room (the badge is the room's unread count) and the friend notice in the
/// user's inbox — so a user who never got the push finds everything on reconnect. A replay
/// makes no outputs, so a restart never pushes anything a second time.
extension HuddleCore {
    /// A chat publication by one member: tells the other member, if offline.
    func notifyOfflineMember(of publication: Publication, in name: ChannelName, into step: inout CoreStep) {
        guard case .chat(let first, let second) = name.kind, let sender = publication.from else { return }
        let recipient = sender == first ? second : first
        pushIfOffline(
            recipient, kind: .chatMessage, title: sender, body: .messageData(publication.data), target: "huddle://chat/" + name.text,
            id: "\(name.text)/\(publication.offset)", from: sender, at: publication.time, into: &step)
    }

    /// Someone asked `user` to be friends; called right after the notice reached `user`'s inbox.
    func notifyOfflineOfFriendRequest(_ user: Username, from requester: Username, message: String, at time: Int64, into step: inout CoreStep) {
        let body = message.isEmpty ? "wants to be friends" : "wants to be friends: " + message
        pushIfOffline(
            user, kind: .friendRequest, title: requester, body: .text(body), target: "huddle://friends/requests",
            id: latestInboxPosition(of: user), from: requester, at: time, into: &step)
    }

    /// `accepter` accepted `user`'s request; called right after the notice reached `user`'s inbox.
    func notifyOfflineOfAcceptance(_ user: Username, by accepter: Username, at time: Int64, into step: inout CoreStep) {
        pushIfOffline(
            user, kind: .friendAccepted, title: accepter, body: .text("accepted your friend request"), target: "huddle://friends",
            id: latestInboxPosition(of: user), from: accepter, at: time, into: &step)
    }

    /// The one way to push: a `pushNotification` for `user` unless they have a live connection,
    /// carrying their badge as it is now. Any feature calls it, with a kind of its own
    /// (`PushKind`) and an `id` unique per notification, after recording what it tells of.
    func pushIfOffline(
        _ user: Username, kind: PushKind, title: String, body: PushBody, target: String, id: String, from: Username,
        at time: Int64, into step: inout CoreStep
    ) {
        guard !connections.hasConnections(of: user), !remotePresence.isOnline(user) else { return }
        let notification = PushNotification(
            user: user, kind: kind, title: title, body: body, badge: badge(of: user), target: target, id: id, from: from, time: time)
        step.outputs.append(.pushNotification(notification))
    }

    /// `inbox:USER/OFFSET` of the user's newest inbox notice: the one just published.
    func latestInboxPosition(of user: Username) -> String {
        let inbox = "inbox:" + user
        return "\(inbox)/\(durableState.channels[inbox]?.lastOffset ?? 0)"
    }
}
