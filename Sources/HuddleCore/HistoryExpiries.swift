/// When each channel's oldest retained publication passes its age limit: the schedule `tick`
/// follows to trim expired history (`CoreCommand.trimExpiredHistory`) without scanning every
/// channel. Derived from the durable channels, rebuilt on restore.
///
/// At most one live entry per channel (`scheduled`); an entry whose channel was rescheduled
/// since is stale and skipped when popped.
struct HistoryExpiries: Sendable {
    private struct Entry: Comparable, Sendable {
        var time: Int64
        var channel: String

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            lhs.time != rhs.time ? lhs.time < rhs.time : lhs.channel < rhs.channel
        }
    }

    private var heap = MinHeap<Entry>()
    private var scheduled: [String: Int64] = [:]

    /// Schedules `channel` at `time` unless it is scheduled already (at that time or earlier:
    /// the earlier entry finds the real expiry when it is popped).
    mutating func schedule(_ channel: String, at time: Int64) {
        if let existing = scheduled[channel], existing <= time { return }
        scheduled[channel] = time
        heap.push(Entry(time: time, channel: channel))
    }

    /// Removes and returns the channels scheduled at or before `time`, in order.
    mutating func popDue(at time: Int64) -> [String] {
        var due: [String] = []
        while let next = heap.min, next.time <= time {
            _ = heap.popMin()
            guard scheduled[next.channel] == next.time else { continue }
            scheduled[next.channel] = nil
            due.append(next.channel)
        }
        return due
    }
}

extension HuddleCore {
    func historyLimit(of channel: String) -> HistoryLimit {
        configuration.historyLimit(for: ChannelNamespace(prefixOf: channel) ?? .room)
    }

    /// Schedules the channel's next trim: when its oldest retained publication expires.
    func scheduleHistoryExpiry(of channel: String) {
        scheduleHistoryExpiry(of: channel, limit: historyLimit(of: channel))
    }

    /// The same, with the channel's limit known already (a publication's).
    func scheduleHistoryExpiry(of channel: String, limit: HistoryLimit) {
        guard let expiry = durableState.channels[channel]?.oldestExpiry(limit: limit) else { return }
        historyExpiries.schedule(channel, at: expiry)
    }

    func scheduleEveryHistoryExpiry() {
        for channel in durableState.channels.byName.keys { scheduleHistoryExpiry(of: channel) }
    }

    /// `tick`: logs a trim of the channels whose oldest publication expired by `time`. A channel
    /// whose oldest publication was trimmed by count since it was scheduled is scheduled again
    /// at its real expiry instead.
    func trimExpiredHistory(at time: Int64, into step: inout CoreStep) {
        var expired: [String] = []
        for channel in historyExpiries.popDue(at: time) {
            guard let expiry = durableState.channels[channel]?.oldestExpiry(limit: historyLimit(of: channel)) else { continue }
            if expiry <= time {
                expired.append(channel)
            } else {
                historyExpiries.schedule(channel, at: expiry)
            }
        }
        if !expired.isEmpty {
            record(.trimExpiredHistory(channels: expired.sorted(), time: time), into: &step)
        }
    }
}
