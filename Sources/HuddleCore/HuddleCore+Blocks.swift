import HuddleProtocol

/// Blocking (protocol.md, "Blocking"): `block`, `unblock`, `blocks`, and the refusal the
/// friend paths ask for.
///
/// Most of what a block hides follows from the friendship it ends: posts, presence, places,
/// `loc:` channels, matches and writing in the 1:1 room all need one, and a blocked pair can
/// never become friends again while the block stands. What friendship does not cover — search,
/// friend requests, and the two's likes and comments on a common friend's posts — asks
/// `Blocks.eitherBlocks`. The blocked user is never told: they see what an unfriending or an
/// unknown user would show them.
extension HuddleCore {
    func block(_ connection: ConnectionRef, requestID: String, user: String, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let other = existingUser(user, connection, requestID, into: &step)
        else { return }
        let me = identity.username
        guard other != me else {
            return fail(connection, requestID, CoreError(.selfRequest, "you cannot block yourself"), into: &step)
        }
        guard !durableState.blocks.blocks(me, other) else {
            return fail(connection, requestID, CoreError(.alreadyBlocked, "you blocked \(other) already"), into: &step)
        }
        guard durableState.blocks.count(of: me) < Blocks.maxBlocksPerUser else {
            let message = "you blocked \(Blocks.maxBlocksPerUser) users, the most allowed; unblock one first"
            return fail(connection, requestID, CoreError(.tooManyBlocks, message), into: &step)
        }
        // Undone the way the two could have undone it themselves, with the same notices: the
        // blocked user sees an unfriending, a cancelled or a declined request, never a block.
        if durableState.friendships.areFriends(me, other) {
            endFriendship(me, other, at: time, into: &step)
        }
        if durableState.friendships.request(from: me, to: other) != nil {
            drop(from: me, to: other, notice: InboxNotice.friendCancelled, at: time, into: &step)
        }
        if durableState.friendships.request(from: other, to: me) != nil {
            drop(from: other, to: me, notice: InboxNotice.friendDeclined, at: time, into: &step)
        }
        record(.block(user: me, blocked: other, time: time), into: &step)
        reply(connection, requestID, .done, into: &step)
    }

    func unblock(_ connection: ConnectionRef, requestID: String, user: String, at time: Int64, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step),
              let other = existingUser(user, connection, requestID, into: &step)
        else { return }
        guard durableState.blocks.blocks(identity.username, other) else {
            return fail(connection, requestID, CoreError(.notBlocked, "you have not blocked \(other)"), into: &step)
        }
        record(.unblock(user: identity.username, blocked: other, time: time), into: &step)
        reply(connection, requestID, .done, into: &step)
    }

    func listBlocks(_ connection: ConnectionRef, requestID: String, into step: inout CoreStep) {
        guard let identity = signedInIdentity(connection, requestID, into: &step) else { return }
        reply(connection, requestID, .users(durableState.blocks.blocked(by: identity.username)), into: &step)
    }

    /// Why `me` may not ask `other` to be friends because of a block, or nil. The blocker is
    /// told plainly; the blocked user gets what an unknown name gets (`named`: as they typed it).
    func blockRefusal(_ me: Username, _ other: Username, named: String) -> CoreError? {
        let blocks = durableState.blocks
        if blocks.blocks(me, other) { return CoreError(.userBlocked, "you blocked \(other); unblock them first") }
        if blocks.blocks(other, me) { return CoreError(.userNotFound, "no user \(named)") }
        return nil
    }
}
