import HuddleProtocol

/// A deleted user's channels, erased in bounded chunks after `eraseUser` (`PendingErasures`).
///
/// The server asks for the next chunk (`continueErasure`) after every turn while an erasure is
/// pending; the deciding node's core walks the channel names it listed when it began
/// (`ErasureScan`, not durable: a restart or another node lists them again, and erasing a channel
/// twice changes nothing), and logs the names that hold something of the user as one
/// `eraseChannels` command — at most `erasureChunkWork` units of work: a name looked at costs
/// `erasureNameWork`, a publication looked at or dropped one. The last chunk is followed by
/// `finishErasure`. The command names its channels, so a replay (and every node) erases exactly
/// what the decider did, whatever order its dictionary had.
extension HuddleCore {
    /// The channel names a decider still has to look at for one erasure.
    struct ErasureScan: Sendable {
        var remaining: [String]
    }

    /// Whether an erasure waits for its next chunk (the server asks for one while this holds).
    public var hasPendingErasure: Bool { !durableState.erasures.isEmpty }

    func continueErasure(at time: Int64, into step: inout CoreStep) {
        guard let user = durableState.erasures.next else { return }
        var scan = erasureScans[user] ?? ErasureScan(remaining: Array(durableState.channels.byName.keys))
        var chosen: [String] = []
        var work = 0
        while work < configuration.erasureChunkWork, let name = scan.remaining.popLast() {
            work += configuration.erasureNameWork
            guard let channel = durableState.channels[name] else { continue }
            if Channels.isShared(name, onlyWith: user) {
                chosen.append(name)
                work += channel.retainedCount
            } else if ChannelNamespace(prefixOf: name) == .room {
                work += channel.retainedCount
                if channel.hasPublications(by: user) { chosen.append(name) }
            }
        }
        if !chosen.isEmpty {
            let command = CoreCommand.eraseChannels(username: user, channels: chosen.sorted(), time: time)
            let prior = priorFacts(of: command)
            record(command, into: &step)
            tellLive(after: command, prior: prior, at: time, into: &step)
        }
        if scan.remaining.isEmpty {
            erasureScans[user] = nil
            record(.finishErasure(username: user, time: time), into: &step)
        } else {
            erasureScans[user] = scan
        }
    }

    /// Applies `eraseChannels`: the user's own and 1:1 channels among `names` go whole (with the
    /// other member's read marker), and in the others the user's publications become tombstones.
    func eraseChannels(_ names: [String], of user: Username) {
        for name in names {
            if Channels.isShared(name, onlyWith: user) {
                durableState.channels.drop(name)
                if let other = Channels.otherMember(of: name, besides: user) { durableState.readMarkers.forget(name, of: other) }
            } else {
                durableState.channels.erase(user, in: name)
            }
        }
    }

    /// What `eraseChannels` turns into tombstones, read before it is applied.
    func erasedPublications(of user: Username, in names: [String]) -> [(channel: String, offset: UInt64)] {
        var removed: [(channel: String, offset: UInt64)] = []
        for name in names where !Channels.isShared(name, onlyWith: user) {
            for offset in durableState.channels[name]?.offsets(publishedBy: user) ?? [] { removed.append((name, offset)) }
        }
        return removed
    }

    /// A channel as readers see it: nil while it waits to be dropped with an erased user.
    func readableChannel(_ name: String) -> Channel? {
        if durableState.erasures.dropsChannel(name) { return nil }
        return durableState.channels[name]
    }

    /// A publication as readers see it: one by a user whose erasure is under way shows as the
    /// tombstone it is about to become.
    func readable(_ publication: Publication) -> Publication {
        guard let from = publication.from, !durableState.erasures.isEmpty, durableState.erasures.contains(from) else { return publication }
        return Publication(
            channel: publication.channel, epoch: publication.epoch, offset: publication.offset, type: "", from: nil, data: "",
            time: publication.time, removed: true)
    }
}
