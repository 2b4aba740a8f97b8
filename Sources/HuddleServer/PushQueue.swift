import HuddleCore

/// The push gateway's waiting notifications: new ones in arrival order, and failed ones until
/// their retry time. Bounded: past `capacity`, the oldest waiting notification is dropped —
/// under a long webhook outage the newest are the ones still worth showing on a lock screen.
///
/// Every retrying notification arrived before every new one (new ones are sent in arrival
/// order, and only one that was sent can be retrying), so "the oldest" is the first-arrived
/// retrying notification if there is one, else the first new one. Retrying ones are found by
/// two heaps — by retry time, by arrival — whose entries are checked against `retrying` when
/// popped (a sent or dropped notification leaves a stale entry behind) and rebuilt when stale
/// ones outnumber live ones, so both stay proportional to what is waiting.
/// Notifications being sent are not here: the gateway holds them, at most its concurrency.
struct PushQueue {
    struct Entry {
        /// Arrival order.
        let sequence: UInt64
        let delivery: PushDelivery
        /// Attempts made so far.
        var attempts = 0
        /// When a retrying notification may be sent again (monotonic milliseconds).
        var due: Int64 = 0
    }

    private struct RetryKey: Comparable, Sendable {
        var due: Int64
        var sequence: UInt64

        static func < (a: RetryKey, b: RetryKey) -> Bool {
            (a.due, a.sequence) < (b.due, b.sequence)
        }
    }

    let capacity: Int
    private var fresh: [Entry] = []
    /// `fresh[..<freshStart]` were taken already; trimmed once they are half the array.
    private var freshStart = 0
    private var retrying: [UInt64: Entry] = [:]
    private var retriesByDue = MinHeap<RetryKey>()
    private var retriesByArrival = MinHeap<UInt64>()
    private var nextSequence: UInt64 = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// Notifications waiting, new and retrying.
    var count: Int { fresh.count - freshStart + retrying.count }

    /// Queues a new notification; returns the one dropped to make room, if the queue was full.
    mutating func append(_ delivery: PushDelivery) -> Entry? {
        fresh.append(Entry(sequence: nextSequence, delivery: delivery))
        nextSequence += 1
        return count > capacity ? dropOldest() : nil
    }

    /// Puts back a notification whose attempt failed, to be sent again at `due`; returns the one
    /// dropped to make room (which may be this one), if the queue was full.
    mutating func retry(_ entry: Entry, at due: Int64) -> Entry? {
        var entry = entry
        entry.due = due
        retrying[entry.sequence] = entry
        retriesByDue.push(RetryKey(due: due, sequence: entry.sequence))
        retriesByArrival.push(entry.sequence)
        rebuildIndexesIfStale()
        return count > capacity ? dropOldest() : nil
    }

    /// The next notification to send at `now`: a retry that is due (it arrived before any new
    /// one), else the oldest new one.
    mutating func next(now: Int64) -> Entry? {
        if let due = earliestRetry(), due <= now, let key = retriesByDue.popMin() {
            return retrying.removeValue(forKey: key.sequence)
        }
        guard freshStart < fresh.count else { return nil }
        return takeFirstFresh()
    }

    /// When the earliest retry is due, if any notification is waiting to retry.
    mutating func earliestRetry() -> Int64? {
        while let key = retriesByDue.min {
            if retrying[key.sequence]?.due == key.due { return key.due }
            _ = retriesByDue.popMin()
        }
        return nil
    }

    /// Empties the queue; returns how many notifications it held.
    mutating func removeAll() -> Int {
        let dropped = count
        fresh.removeAll()
        freshStart = 0
        retrying.removeAll()
        retriesByDue.removeAll()
        retriesByArrival.removeAll()
        return dropped
    }

    private mutating func dropOldest() -> Entry? {
        while let sequence = retriesByArrival.popMin() {
            if let entry = retrying.removeValue(forKey: sequence) {
                rebuildIndexesIfStale()
                return entry
            }
        }
        guard freshStart < fresh.count else { return nil }
        return takeFirstFresh()
    }

    private mutating func takeFirstFresh() -> Entry {
        let entry = fresh[freshStart]
        freshStart += 1
        if freshStart == fresh.count {
            fresh.removeAll(keepingCapacity: true)
            freshStart = 0
        } else if freshStart >= 1024, freshStart * 2 >= fresh.count {
            fresh.removeFirst(freshStart)
            freshStart = 0
        }
        return entry
    }

    private mutating func rebuildIndexesIfStale() {
        let limit = 2 * retrying.count + 64
        guard retriesByDue.count > limit || retriesByArrival.count > limit else { return }
        retriesByDue.removeAll()
        retriesByArrival.removeAll()
        for entry in retrying.values {
            retriesByDue.push(RetryKey(due: entry.due, sequence: entry.sequence))
            retriesByArrival.push(entry.sequence)
        }
    }
}
