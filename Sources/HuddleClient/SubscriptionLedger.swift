import HuddleProtocol

/// What a `HuddleClient` has delivered of each channel it subscribes to, so that the
/// application sees every publication once and in order across reconnects: a live or
/// recovered publication is delivered only if it is the next offset after the last one
/// delivered, in the same epoch. An older one is a duplicate (dropped); a later one is a gap
/// (dropped, and the channel is resubscribed from its last position, which makes the server
/// replay the missing ones or say it cannot).
///
/// A value with no I/O: `HuddleClient` feeds it and acts on its verdicts.
struct SubscriptionLedger {
    struct Entry: Equatable {
        /// The last publication delivered, or the latest offset a subscribe reply reported;
        /// nil before the first reply of a subscription made without `since`.
        var position: Position?
        /// A subscribe for this channel succeeded on some connection.
        var confirmed = false
        /// A resubscribe after a gap is on its way: live publications are dropped until its
        /// reply replays them.
        var resyncing = false
    }

    enum Verdict: Equatable {
        case deliver
        /// Already delivered (or held back during a resync): drop.
        case duplicate
        /// Not the next offset, or another epoch: drop and resubscribe.
        case gap
        /// Not a channel the application subscribes to (any more).
        case untracked
    }

    private(set) var entries: [String: Entry] = [:]

    var count: Int { entries.count }

    func isTracked(_ channel: String) -> Bool { entries[channel] != nil }

    func position(of channel: String) -> Position? { entries[channel]?.position }

    /// The application subscribes to `channel`, resuming after `since` if given. A channel
    /// already tracked keeps the later of its position and `since`, so nothing delivered is
    /// delivered again.
    mutating func track(_ channel: String, since: Position?) {
        guard var entry = entries[channel] else {
            entries[channel] = Entry(position: since)
            return
        }
        if let since, Self.isLater(since, than: entry.position) { entry.position = since }
        entries[channel] = entry
    }

    mutating func untrack(_ channel: String) {
        entries[channel] = nil
    }

    mutating func untrackAll() {
        entries = [:]
    }

    /// Whether the publication at `epoch`/`offset` of `channel` is to be delivered now;
    /// `.deliver` records it as delivered. Live publications are held back during a resync
    /// (`replayed` false); the replayed ones of a subscribe reply are not.
    mutating func offer(channel: String, epoch: String, offset: UInt64, replayed: Bool) -> Verdict {
        guard var entry = entries[channel] else { return .untracked }
        if entry.resyncing && !replayed { return .duplicate }
        let verdict: Verdict
        switch entry.position {
        case nil:
            // Subscribed without `since` and no reply yet: the stream starts here.
            verdict = .deliver
        case let position?:
            if position.epoch == epoch {
                verdict = offset <= position.offset ? .duplicate : offset == position.offset + 1 ? .deliver : .gap
            } else if position.epoch.isEmpty && position.offset == 0 {
                // The channel did not exist yet: its first publication creates the epoch.
                verdict = offset == 1 ? .deliver : .gap
            } else {
                verdict = .gap
            }
        }
        if verdict == .deliver {
            entry.position = Position(epoch: epoch, offset: offset)
            entries[channel] = entry
        }
        return verdict
    }

    /// A subscribe reply for `channel` arrived (after its publications were offered): delivery
    /// continues after the channel's latest offset. Returns false when the channel is not tracked.
    @discardableResult
    mutating func subscribed(channel: String, epoch: String, offset: UInt64) -> Bool {
        guard var entry = entries[channel] else { return false }
        let latest = Position(epoch: epoch, offset: offset)
        if Self.isLater(latest, than: entry.position) || entry.position?.epoch != epoch {
            entry.position = latest
        }
        entry.confirmed = true
        entry.resyncing = false
        entries[channel] = entry
        return true
    }

    /// A resubscribe for `channel` is going out because of a gap.
    mutating func beginResync(_ channel: String) {
        entries[channel]?.resyncing = true
    }

    /// The connection dropped: every channel is resubscribed on the next one anyway.
    mutating func connectionLost() {
        for channel in entries.keys { entries[channel]?.resyncing = false }
    }

    /// The channels to resubscribe on a new connection, by name (a stable order), each with
    /// the position to resume after.
    func channelsToResume() -> [(channel: String, since: Position?)] {
        entries.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { ($0, entries[$0]?.position) }
    }

    /// Whether `candidate` is past `current` in the same epoch (or `current` is nothing yet).
    private static func isLater(_ candidate: Position, than current: Position?) -> Bool {
        guard let current else { return true }
        return candidate.epoch == current.epoch && candidate.offset > current.offset
    }
}
