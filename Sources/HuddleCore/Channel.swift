import HuddleProtocol

/// One channel's durable state: its epoch, the offset of its newest publication, and the
/// publications it still keeps (offsets `firstRetainedOffset...lastOffset`, no gaps).
///
/// A channel exists from its first publication on. History is trimmed by count and age when a
/// publication is appended (the only time a durable change happens); reads filter by age with
/// their own time, treating expired publications as a prefix so a reader never sees a gap.
public struct Channel: Sendable, Equatable {
    public private(set) var epoch: String
    /// 0 only transiently: a channel is created with its first publication.
    public private(set) var lastOffset: UInt64
    private(set) var retained: PublicationRing
    /// Offsets of retained publications that carry a `client_id`, by publisher and id: a retried
    /// publish is found in O(1). Derived from `retained` (rebuilt when decoding), and trimmed
    /// with it, so an id is remembered exactly as long as its publication is kept.
    private var offsetsByClientID: [ClientPublicationID: UInt64] = [:]
    /// Offsets of the retained tombstones, ascending: unread counts skip them in O(log n).
    /// Derived from `retained` (rebuilt when decoding), and trimmed with it.
    private var removedOffsets: [UInt64] = []

    init(epoch: String) {
        self.epoch = epoch
        self.lastOffset = 0
        self.retained = PublicationRing()
    }

    /// The offset of the retained publication `from` published with `clientID`, if any.
    func offset(publishedBy from: Username?, clientID: String) -> UInt64? {
        offsetsByClientID[ClientPublicationID(from: from, clientID: clientID)]
    }

    public var retainedCount: Int { retained.count }

    /// Offset of the oldest retained publication; `lastOffset + 1` when none is retained.
    public var firstRetainedOffset: UInt64 { lastOffset + 1 - UInt64(retained.count) }

    /// Appends the next publication and trims what `limit` no longer keeps; returns its offset.
    mutating func append(_ publication: RetainedPublication, limit: HistoryLimit) -> UInt64 {
        let cutoff = Self.ageCutoff(at: publication.time, limit: limit)
        while let oldest = retained.first, oldest.time <= cutoff { removeOldest() }
        while retained.count >= max(limit.maxPublications, 1) { removeOldest() }
        retained.append(publication, keepingAtMost: limit.maxPublications)
        lastOffset += 1
        if let clientID = publication.clientID {
            offsetsByClientID[ClientPublicationID(from: publication.from, clientID: clientID)] = lastOffset
        }
        return lastOffset
    }

    private mutating func removeOldest() {
        if let oldest = retained.first, let clientID = oldest.clientID {
            let key = ClientPublicationID(from: oldest.from, clientID: clientID)
            // A later publication may have reused the id after this one; only drop our own entry.
            if offsetsByClientID[key] == firstRetainedOffset { offsetsByClientID[key] = nil }
        }
        if removedOffsets.first == firstRetainedOffset { removedOffsets.removeFirst() }
        retained.removeFirst()
    }

    /// Whether `offset` holds a retained publication that is not a tombstone yet.
    func canRemove(at offset: UInt64) -> Bool {
        offset >= firstRetainedOffset && offset <= lastOffset && !retained[Int(offset - firstRetainedOffset)].removed
    }

    /// Turns the publication at `offset` into a tombstone: offsets stay contiguous, and what was
    /// written (type, from, data, client id) is gone. Returns false when there is nothing to
    /// remove there (not retained, or a tombstone already).
    @discardableResult
    mutating func remove(at offset: UInt64) -> Bool {
        guard canRemove(at: offset) else { return false }
        let index = Int(offset - firstRetainedOffset)
        let stored = retained[index]
        if let clientID = stored.clientID {
            let key = ClientPublicationID(from: stored.from, clientID: clientID)
            if offsetsByClientID[key] == offset { offsetsByClientID[key] = nil }
        }
        retained[index] = stored.tombstone
        removedOffsets.insert(offset, at: Feed.countOfIDs(in: removedOffsets, below: offset))
        return true
    }

    /// How many tombstones lie in `after + 1 ... lastOffset`: removed publications are not unread.
    func removedCount(after offset: UInt64) -> UInt64 {
        UInt64(removedOffsets.count - Feed.countOfIDs(in: removedOffsets, below: offset + 1))
    }

    /// Offsets of the retained publications `user` published (tombstones excluded), oldest first.
    func offsets(publishedBy user: Username) -> [UInt64] {
        var found: [UInt64] = []
        for index in 0..<retained.count where retained[index].from == user && !retained[index].removed {
            found.append(firstRetainedOffset + UInt64(index))
        }
        return found
    }

    /// Whether `user` published a retained publication that is not a tombstone.
    func hasPublications(by user: Username) -> Bool {
        for index in 0..<retained.count where retained[index].from == user && !retained[index].removed { return true }
        return false
    }

    /// When the oldest retained publication passes `limit`'s age; nil when none is retained.
    func oldestExpiry(limit: HistoryLimit) -> Int64? {
        guard let oldest = retained.first else { return nil }
        let (expiry, overflow) = oldest.time.addingReportingOverflow(limit.maxAgeMilliseconds)
        return overflow ? Int64.max : expiry
    }

    /// Drops the publications past `limit`'s age at `time`: no reader could see them any more,
    /// but a channel nobody publishes to would otherwise keep them for ever.
    mutating func trimExpired(at time: Int64, limit: HistoryLimit) {
        let cutoff = Self.ageCutoff(at: time, limit: limit)
        while let oldest = retained.first, oldest.time <= cutoff { removeOldest() }
    }

    /// The oldest offset a reader may still see at `time`: publications at or past the age limit
    /// are skipped from the oldest on, up to the first one still young enough.
    func firstReadableOffset(at time: Int64, limit: HistoryLimit) -> UInt64 {
        let cutoff = Self.ageCutoff(at: time, limit: limit)
        var skipped = 0
        while skipped < retained.count, retained[skipped].time <= cutoff { skipped += 1 }
        return firstRetainedOffset + UInt64(skipped)
    }

    /// The retained publication at `offset`, which must be in `firstRetainedOffset...lastOffset`.
    func publication(at offset: UInt64, channel: String) -> Publication {
        let stored = retained[Int(offset - firstRetainedOffset)]
        return Publication(
            channel: channel, epoch: epoch, offset: offset,
            type: stored.type, from: stored.from, data: stored.data, time: stored.time, clientID: stored.clientID,
            removed: stored.removed
        )
    }

    /// Publications older than this (inclusive) are past the age limit at `time`.
    private static func ageCutoff(at time: Int64, limit: HistoryLimit) -> Int64 {
        let (cutoff, overflow) = time.subtractingReportingOverflow(limit.maxAgeMilliseconds)
        return overflow ? Int64.min : cutoff
    }
}

/// The epoch, the last offset and the retained publications, oldest first.
extension Channel: PersistedValue {
    var persisted: JSONValue { .record([("epoch", epoch.persisted), ("lastOffset", lastOffset.persisted), ("publications", retained.persisted)]) }

    init(persisted: JSONValue) throws(RecordDecodingError) {
        let f = try PersistedFields(persisted, "Channel")
        epoch = try f("epoch")
        lastOffset = try f("lastOffset")
        retained = try f("publications")
        guard UInt64(retained.count) <= lastOffset else {
            throw RecordDecodingError("\(retained.count) publications retained but the last offset is \(lastOffset)")
        }
        for index in 0..<retained.count {
            if retained[index].removed { removedOffsets.append(firstRetainedOffset + UInt64(index)) }
            if let clientID = retained[index].clientID {
                offsetsByClientID[ClientPublicationID(from: retained[index].from, clientID: clientID)] = firstRetainedOffset + UInt64(index)
            }
        }
    }
}
