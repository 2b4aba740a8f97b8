/// Merges ascending lists of distinct ids into one descending run — the feed's "newest first
/// over the user and every friend" — taking only as many as asked.
///
/// Each list is entered at its newest id below the bound (a binary search), then a heap keyed
/// on each list's current id yields the next newest: O(lists · log lists) to start and
/// O(log lists) per id. Ids are unique across lists, so the order of `lists` cannot change the
/// result (the core builds `lists` from a set).
enum NewestFirstMerge {
    /// Up to `count` ids, descending, all below `bound` (nil: no bound).
    static func ids(of lists: [[UInt64]], below bound: UInt64?, count: Int) -> [UInt64] {
        var heads = MinHeap<Head>()
        for (list, ids) in lists.enumerated() {
            let end = bound.map { Feed.countOfIDs(in: ids, below: $0) } ?? ids.count
            if end > 0 { heads.push(Head(id: ids[end - 1], list: list, position: end - 1)) }
        }
        var merged: [UInt64] = []
        merged.reserveCapacity(min(count, 64))
        while merged.count < count, let newest = heads.popMin() {
            merged.append(newest.id)
            if newest.position > 0 {
                let position = newest.position - 1
                heads.push(Head(id: lists[newest.list][position], list: newest.list, position: position))
            }
        }
        return merged
    }

    /// A list's newest id not yet taken. Ordered so that the min-heap pops the highest id.
    private struct Head: Comparable, Sendable {
        var id: UInt64
        var list: Int
        var position: Int

        static func < (lhs: Head, rhs: Head) -> Bool { lhs.id > rhs.id }
        static func == (lhs: Head, rhs: Head) -> Bool { lhs.id == rhs.id }
    }
}
