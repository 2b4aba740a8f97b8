import HuddleProtocol

/// Channels: subscribe with recovery, unsubscribe, publish, history and room presence
/// (protocol.md, "Channels" and "Ops").
extension HuddleCore {
    func subscribe(
        _ connection: ConnectionRef, requestID: String, channel text: String, since: ChannelPosition?,
        at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let name = channelName(text, connection, requestID, into: &step)
        else { return }
        if let refusal = name.readRefusal(for: identity.username, friendsOfOwner: friends(of:)) {
            return fail(connection, requestID, refusal, into: &step)
        }
        // Subscribing again is allowed (it asks for a recovery again) and counts once.
        if !subscriptions.isSubscribed(connection, to: name.text) {
            let limit = configuration.maxSubscriptionsPerConnection
            guard subscriptions.count(of: connection) < limit else {
                let error = CoreError(.tooManySubscriptions, "at most \(limit) subscriptions per connection")
                return fail(connection, requestID, error, into: &step)
            }
            subscriptions.add(connection, to: name.text)
        }
        let channel = readableChannel(name.text)
        var recovered: Bool?
        var missed: [Publication] = []
        if let since {
            if let publications = recovery(after: since, in: channel, name: name, at: time) {
                recovered = true
                missed = publications
            } else {
                recovered = false
            }
        }
        if case .loc(let owner) = name.kind {
            // A follower sees the owner's place at once, however long ago it was published.
            let current = whereabouts(of: owner)
            return reply(connection, requestID, .locationSubscribed(
                channel: name.text, epoch: channel?.epoch ?? "", offset: channel?.lastOffset ?? 0,
                recovered: recovered, publications: missed, current: current
            ), into: &step)
        }
        reply(connection, requestID, .subscribed(
            channel: name.text, epoch: channel?.epoch ?? "", offset: channel?.lastOffset ?? 0,
            recovered: recovered, publications: missed
        ), into: &step)
    }

    /// The publications after `since`, oldest first, if the channel still has every one of them
    /// and they are few enough; nil if the client must page history instead.
    ///
    /// A channel never published to has epoch "" and offset 0. The position ("", 0) — what a
    /// client saw of such a channel — stays recoverable after the channel is created, as long
    /// as publication 1 is still kept: the client missed everything from the first on.
    func recovery(after since: ChannelPosition, in channel: Channel?, name: ChannelName, at time: Int64) -> [Publication]? {
        let isEmptyPosition = since.epoch.isEmpty && since.offset == 0
        guard let channel else { return isEmptyPosition ? [] : nil }
        guard since.epoch == channel.epoch || isEmptyPosition, since.offset <= channel.lastOffset else { return nil }
        let firstReadable = channel.firstReadableOffset(at: time, limit: configuration.historyLimit(for: name.namespace))
        guard since.offset + 1 >= firstReadable,
              channel.lastOffset - since.offset <= UInt64(max(configuration.maxRecoveredPublications, 0))
        else { return nil }
        guard since.offset < channel.lastOffset else { return [] }
        return (since.offset + 1...channel.lastOffset).map { readable(channel.publication(at: $0, channel: name.text)) }
    }

    func unsubscribe(_ connection: ConnectionRef, requestID: String, channel text: String, into step: inout CoreStep) {
        guard signedInIdentity(connection, requestID, into: &step) != nil,
              let name = channelName(text, connection, requestID, into: &step)
        else { return }
        guard subscriptions.remove(connection, from: name.text) else {
            return fail(connection, requestID, CoreError(.notSubscribed, "not subscribed to \(name.text)"), into: &step)
        }
        reply(connection, requestID, .unsubscribed, into: &step)
    }

    func publish(
        _ connection: ConnectionRef, requestID: String, channel text: String, type: String, data: String, clientID: String?,
        at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let name = channelName(text, connection, requestID, into: &step)
        else { return }
        if let refusal = name.publishRefusal(for: identity.username, areFriends: durableState.friendships.areFriends) {
            return fail(connection, requestID, refusal, into: &step)
        }
        guard let clientID else {
            // Busy first: a publish refused for its readers must not use up the room's budget.
            if hasReaderBehind(name.text) { return fail(connection, requestID, Self.busy(name.text), into: &step) }
            if let refusal = roomRefusal(name, from: identity.username, data: data, at: time) {
                return fail(connection, requestID, refusal, into: &step)
            }
            return publish(to: name, from: identity.username, type: type, data: data, replyingTo: connection, requestID, at: time, into: &step)
        }
        if let channel = durableState.channels[name.text],
           let offset = channel.offset(publishedBy: identity.username, clientID: clientID) {
            // A retry (the reply to the first attempt was lost): the first one's position, and
            // nothing stored or delivered again.
            let first = channel.publication(at: offset, channel: name.text)
            return reply(connection, requestID, .alreadyPublished(epoch: first.epoch, offset: offset, time: first.time), into: &step)
        }
        if hasReaderBehind(name.text) { return fail(connection, requestID, Self.busy(name.text), into: &step) }
        if let refusal = roomRefusal(name, from: identity.username, data: data, at: time) {
            return fail(connection, requestID, refusal, into: &step)
        }
        let publication = appendPublication(
            to: name.text, namespace: name.namespace, from: identity.username, type: type, data: data, clientID: clientID, time: time)
        step.commands.append(.publishWithClientID(channel: name.text, from: identity.username, type: type, data: data, clientID: clientID, time: time))
        reply(connection, requestID, .published(epoch: publication.epoch, offset: publication.offset, time: time), into: &step)
        deliver(publication, into: &step)
        notifyOfflineMember(of: publication, in: name, into: &step)
    }

    /// How long a publisher refused `busy` is asked to wait: a reader that still reads empties
    /// its threshold's worth of queue in well under this on any working link.
    static let busyRetryMilliseconds: Int64 = 100

    /// The server reports a connection falling behind (its queue over the threshold while it
    /// still reads) or catching up (protocol.md, "Backpressure").
    public func readerBehindChanged(_ connection: ConnectionRef, behind: Bool) {
        if behind {
            readersBehind.insert(connection)
        } else {
            readersBehind.remove(connection)
        }
    }

    /// Whether a subscriber of `channel` is behind: the publisher waits, not the reader. The
    /// set is almost always empty, so this costs nothing on the common path.
    private func hasReaderBehind(_ channel: String) -> Bool {
        readersBehind.contains { subscriptions.isSubscribed($0, to: channel) }
    }

    private static func busy(_ channel: String) -> CoreError {
        CoreError(.busy, "a reader of \(channel) is behind; nothing was stored, publish again after retry_after_ms",
                  retryAfterMilliseconds: busyRetryMilliseconds)
    }

    /// A user's publication to a `room:` is counted against their room budgets (`RoomQuota`);
    /// other namespaces have owners or members, and their own bounds.
    private func roomRefusal(_ name: ChannelName, from user: Username, data: String, at time: Int64) -> CoreError? {
        guard case .room = name.kind else { return nil }
        let creating = !durableState.channels.contains(name.text)
        return roomQuota.admit(user, bytes: data.utf8.count, creating: creating, at: time)
    }

    /// HTTP API: the server may publish to any valid channel, as nobody (`from` nil).
    func serverPublish(requestID: String, channel text: String, type: String, data: String, at time: Int64, into step: inout CoreStep) {
        guard let name = channelName(text, nil, requestID, into: &step) else { return }
        publish(to: name, from: nil, type: type, data: data, replyingTo: nil, requestID, at: time, into: &step)
    }

    /// Stores the publication (logging the command), replies, then delivers it to every
    /// subscriber — the publisher too if it is subscribed.
    private func publish(
        to name: ChannelName, from: Username?, type: String, data: String,
        replyingTo connection: ConnectionRef?, _ requestID: String, at time: Int64, into step: inout CoreStep
    ) {
        let publication = appendPublication(to: name.text, namespace: name.namespace, from: from, type: type, data: data, time: time)
        step.commands.append(.publish(channel: name.text, from: from, type: type, data: data, time: time))
        reply(connection, requestID, .published(epoch: publication.epoch, offset: publication.offset, time: time), into: &step)
        deliver(publication, into: &step)
        notifyOfflineMember(of: publication, in: name, into: &step)
    }

    /// A notice the server itself publishes (friend requests, …) to `inbox:USER`: stored and
    /// logged like any publication, and delivered to the inbox's live subscribers.
    /// `notice` on `user`'s inbox, in its wire form.
    func publishNotice(_ notice: InboxNotice, to user: Username, at time: Int64, into step: inout CoreStep) {
        publishNotice(to: user, type: notice.type, data: JSONWriter.serialize(notice.data), at: time, into: &step)
    }

    func publishNotice(to user: Username, type: String, data: String, at time: Int64, into step: inout CoreStep) {
        let channel = "inbox:" + user
        let publication = appendPublication(to: channel, namespace: .inbox, from: nil, type: type, data: data, time: time)
        step.commands.append(.publish(channel: channel, from: nil, type: type, data: data, time: time))
        deliver(publication, into: &step)
    }

    /// The live `publication` event for the channel's subscribers; the subscriber list is
    /// handed over as kept: sorted, not copied.
    func deliver(_ publication: Publication, into step: inout CoreStep) {
        let subscribers = subscriptions.subscribers(of: publication.channel)
        if !subscribers.isEmpty { step.outputs.append(.deliver(publication, to: subscribers)) }
    }

    /// A page of history, newest first: offsets below `before` (default: from the newest),
    /// at most `limit`. A nil connection is the HTTP API, which may read any channel.
    func history(
        _ connection: ConnectionRef?, requestID: String, channel text: String, before: UInt64?, limit: Int,
        at time: Int64, into step: inout CoreStep
    ) {
        if let connection {
            guard let identity = signedInIdentity(connection, requestID, into: &step),
                  let name = channelName(text, connection, requestID, into: &step)
            else { return }
            if let refusal = name.readRefusal(for: identity.username, friendsOfOwner: friends(of:)) {
                return fail(connection, requestID, refusal, into: &step)
            }
            reply(connection, requestID, historyPage(of: name, before: before, limit: limit, at: time), into: &step)
        } else {
            guard let name = channelName(text, nil, requestID, into: &step) else { return }
            reply(nil, requestID, historyPage(of: name, before: before, limit: limit, at: time), into: &step)
        }
    }

    private func historyPage(of name: ChannelName, before: UInt64?, limit: Int, at time: Int64) -> CoreReply {
        guard let channel = readableChannel(name.text) else {
            return .history(channel: name.text, epoch: "", offset: 0, publications: [], nextBefore: nil)
        }
        let firstReadable = channel.firstReadableOffset(at: time, limit: configuration.historyLimit(for: name.namespace))
        let newest = before.map { $0 == 0 ? 0 : min($0 - 1, channel.lastOffset) } ?? channel.lastOffset
        var publications: [Publication] = []
        var nextBefore: UInt64?
        if newest >= firstReadable {
            let pageSize = UInt64(max(limit, 1))
            let oldest = newest - firstReadable + 1 > pageSize ? newest - pageSize + 1 : firstReadable
            publications.reserveCapacity(Int(newest - oldest + 1))
            for offset in stride(from: newest, through: oldest, by: -1) {
                publications.append(readable(channel.publication(at: offset, channel: name.text)))
            }
            nextBefore = oldest > firstReadable ? oldest : nil
        }
        return .history(
            channel: name.text, epoch: channel.epoch, offset: channel.lastOffset,
            publications: publications, nextBefore: nextBefore
        )
    }

    /// The `presence` op: the signed-in users with a live connection subscribed to a room.
    func roomPresence(_ connection: ConnectionRef, requestID: String, channel text: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let name = channelName(text, connection, requestID, into: &step)
        else { return }
        guard case .room = name.kind else {
            return fail(connection, requestID, CoreError(.invalidChannel, "presence is kept for room: channels only"), into: &step)
        }
        if let refusal = name.readRefusal(for: identity.username, friendsOfOwner: friends(of:)) {
            return fail(connection, requestID, refusal, into: &step)
        }
        let subscribers = subscriptions.subscribers(of: name.text)
        let users = Set(subscribers.compactMap { connections[$0]?.identity?.username }).sorted()
        reply(connection, requestID, .presence(channel: name.text, users: users), into: &step)
    }

    /// The parsed name, or nil having replied `invalid_channel`.
    func channelName(_ text: String, _ connection: ConnectionRef?, _ requestID: String, into step: inout CoreStep) -> ChannelName? {
        do {
            return try ChannelName(parsing: text)
        } catch {
            fail(connection, requestID, error, into: &step)
            return nil
        }
    }
}
