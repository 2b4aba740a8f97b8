/// Which connections are subscribed to which channels (ephemeral).
///
/// Each channel's subscribers are kept as a sorted array: a publish hands that array to
/// `CoreOutput.deliver` as it is (copy-on-write, no sorting, no copying), and subscribing or
/// unsubscribing pays the O(subscribers) insertion instead — publishes outnumber them.
struct Subscriptions: Sendable {
    private var subscribersByChannel: [String: [ConnectionRef]] = [:]
    private var channelsByConnection: [ConnectionRef: Set<String>] = [:]

    init() {}

    /// Sorted.
    func subscribers(of channel: String) -> [ConnectionRef] {
        subscribersByChannel[channel] ?? []
    }

    func isSubscribed(_ connection: ConnectionRef, to channel: String) -> Bool {
        channelsByConnection[connection]?.contains(channel) == true
    }

    func count(of connection: ConnectionRef) -> Int {
        channelsByConnection[connection]?.count ?? 0
    }

    /// Returns false if it was subscribed already.
    @discardableResult
    mutating func add(_ connection: ConnectionRef, to channel: String) -> Bool {
        guard channelsByConnection[connection, default: []].insert(channel).inserted else { return false }
        subscribersByChannel[channel, default: []].insertSorted(connection)
        return true
    }

    /// Returns false if it was not subscribed.
    @discardableResult
    mutating func remove(_ connection: ConnectionRef, from channel: String) -> Bool {
        guard channelsByConnection[connection]?.remove(channel) != nil else { return false }
        if channelsByConnection[connection]?.isEmpty == true { channelsByConnection[connection] = nil }
        removeSubscriber(connection, from: channel)
        return true
    }

    mutating func removeAll(of connection: ConnectionRef) {
        guard let channels = channelsByConnection.removeValue(forKey: connection) else { return }
        for channel in channels { removeSubscriber(connection, from: channel) }
    }

    private mutating func removeSubscriber(_ connection: ConnectionRef, from channel: String) {
        subscribersByChannel[channel]?.removeSorted(connection)
        if subscribersByChannel[channel]?.isEmpty == true { subscribersByChannel[channel] = nil }
    }
}

extension Array where Element == ConnectionRef {
    /// The index of the first element not less than `connection` (binary search).
    func sortedInsertionIndex(of connection: ConnectionRef) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < connection { low = middle + 1 } else { high = middle }
        }
        return low
    }

    mutating func insertSorted(_ connection: ConnectionRef) {
        insert(connection, at: sortedInsertionIndex(of: connection))
    }

    mutating func removeSorted(_ connection: ConnectionRef) {
        let index = sortedInsertionIndex(of: connection)
        if index < count, self[index] == connection { remove(at: index) }
    }
}
