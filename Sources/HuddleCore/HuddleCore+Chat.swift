import HuddleProtocol

/// Chat rooms beyond publishing: read markers, unread counts (the badge) and typing
/// indicators (protocol.md, "Chat").
extension HuddleCore {
    func markRead(
        _ connection: ConnectionRef, requestID: String, channel text: String, offset: UInt64, at time: Int64, into step: inout CoreStep
    ) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let name = chatRoom(text, of: identity.username, connection, requestID, into: &step)
        else { return }
        let user = identity.username
        // Past the newest publication means "everything": a marker never points at nothing.
        let target = min(offset, durableState.channels[name.text]?.lastOffset ?? 0)
        if target > durableState.readMarkers.offset(of: user, in: name.text) {
            record(.markRead(user: user, channel: name.text, offset: target, time: time), into: &step)
        }
        let room = unread(of: user, in: name.text)
        reply(connection, requestID, .readMarker(channel: name.text, read: room.read, unread: room.unread, badge: badge(of: user)), into: &step)
    }

    func unreadCounts(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        let rooms = chatRooms(of: identity.username).map { unread(of: identity.username, in: $0) }
        reply(connection, requestID, .unread(rooms: rooms, total: rooms.reduce(0) { $0 + $1.unread }), into: &step)
    }

    /// Tells the other member's live connections; nothing is stored or logged.
    func typing(_ connection: ConnectionRef, requestID: String, channel text: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let name = chatRoom(text, of: identity.username, connection, requestID, into: &step)
        else { return }
        if let refusal = name.publishRefusal(for: identity.username, areFriends: durableState.friendships.areFriends) {
            return fail(connection, requestID, refusal, into: &step)
        }
        reply(connection, requestID, .done, into: &step)
        guard case .chat(let first, let second) = name.kind else { return }
        let recipients = connections.connections(of: identity.username == first ? second : first)
        if !recipients.isEmpty { step.outputs.append(.typing(channel: name.text, user: identity.username, to: recipients)) }
    }

    /// The user's badge: unread publications over all their chat rooms.
    func badge(of user: Username) -> UInt64 {
        chatRooms(of: user).reduce(0) { $0 + unread(of: user, in: $1).unread }
    }

    /// Chat rooms the user has: one per friend, and any other (a former friend's) they read in.
    /// Only rooms that exist (have a publication); sorted. O(friends), no scan of all channels.
    func chatRooms(of user: Username) -> [String] {
        var rooms = Set(friends(of: user).map { Self.chatChannel(user, $0) })
        if let marked = durableState.readMarkers.channels(of: user) { rooms.formUnion(marked) }
        return rooms.filter { durableState.channels[$0] != nil }.sorted()
    }

    func unread(of user: Username, in channel: String) -> RoomUnread {
        let stored = durableState.channels[channel]
        let last = stored?.lastOffset ?? 0
        let read = min(durableState.readMarkers.offset(of: user, in: channel), last)
        // A removed publication is nothing to read.
        let removed = stored?.removedCount(after: read) ?? 0
        return RoomUnread(channel: channel, offset: last, read: read, unread: last - read - removed)
    }

    /// `chat:A~B` with the two names in byte order (protocol.md, "Channels").
    static func chatChannel(_ first: Username, _ second: Username) -> String {
        first.utf8.lexicographicallyPrecedes(second.utf8) ? "chat:\(first)~\(second)" : "chat:\(second)~\(first)"
    }

    /// The parsed name of a chat room the user is a member of; otherwise nil, having replied
    /// `invalid_channel` (not a chat: channel) or `forbidden`.
    private func chatRoom(
        _ text: String, of user: Username, _ connection: ConnectionRef, _ requestID: String, into step: inout CoreStep
    ) -> ChannelName? {
        let name: ChannelName
        do {
            name = try ChannelName(parsing: text)
        } catch {
            fail(connection, requestID, error, into: &step)
            return nil
        }
        guard case .chat = name.kind else {
            fail(connection, requestID, CoreError(.invalidChannel, "this op is for chat: channels"), into: &step)
            return nil
        }
        if let refusal = name.readRefusal(for: user, friendsOfOwner: friends(of:)) {
            fail(connection, requestID, refusal, into: &step)
            return nil
        }
        return name
    }
}
