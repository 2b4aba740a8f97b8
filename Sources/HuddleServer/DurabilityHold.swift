import HuddleCore

/// Outputs of the core that wait for the log to be durable (`--fsync always`): each turn's
/// deliveries (replies, events, closes, HTTP and photo answers, per I/O loop) and push
/// notifications, tagged with the log sequence they depend on, released strictly in the order
/// they were held, only once the log is durable up to that sequence.
///
/// Everything a turn sends waits, reads included: a read answered while an earlier write is not
/// yet durable may show that write, and an answer may never run ahead of the disk.
struct DurabilityHold {
    struct Outputs {
        /// The newest log record these outputs may show.
        var sequence: UInt64
        var deliveries: [[LoopDelivery]]
        var pushes: [PushNotification]
        /// The answered requests' ops and submission times: their latency ends at the release.
        var answered: [(op: String, submitted: UInt64)] = []
    }

    private var queue: [Outputs] = []
    private var head = 0

    var isEmpty: Bool { head == queue.count }

    /// Holds `deliveries` (one list per loop) and `pushes` until the log is durable up to `sequence`.
    mutating func hold(
        _ deliveries: [[LoopDelivery]], _ pushes: [PushNotification], answered: [(op: String, submitted: UInt64)] = [],
        until sequence: UInt64
    ) {
        if head < queue.count, queue[queue.count - 1].sequence == sequence {
            // Same turn (or the same unsynced sequence): one batch, order kept.
            for index in deliveries.indices { queue[queue.count - 1].deliveries[index] += deliveries[index] }
            queue[queue.count - 1].pushes += pushes
            queue[queue.count - 1].answered += answered
        } else {
            queue.append(Outputs(sequence: sequence, deliveries: deliveries, pushes: pushes, answered: answered))
        }
    }

    /// Takes, oldest first, every held batch the log now covers, merged per loop in order.
    mutating func release(upTo durable: UInt64, loops: Int) -> Outputs? {
        guard head < queue.count, queue[head].sequence <= durable else { return nil }
        var released = Outputs(sequence: 0, deliveries: Array(repeating: [], count: loops), pushes: [])
        while head < queue.count, queue[head].sequence <= durable {
            let batch = queue[head]
            for index in batch.deliveries.indices { released.deliveries[index] += batch.deliveries[index] }
            released.pushes += batch.pushes
            released.answered += batch.answered
            released.sequence = batch.sequence
            head += 1
        }
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return released
    }
}
