/// Users by a text key, in the keys' byte order (then the users'), for `user_search`'s prefix
/// lookups: a binary search finds the first match and the next `limit` entries are the answer,
/// rather than a scan of every user. Changes pay the sorted insertion; searches are
/// O(log n + limit). Derived state (`UsernameIndex`, `DisplayNameIndex`), never durable.
struct PrefixIndex: Sendable {
    private struct Entry: Sendable {
        var key: String
        var user: Username
    }

    private var sorted: [Entry] = []

    init() {}

    init(_ pairs: some Sequence<(key: String, user: Username)>) {
        sorted = pairs.map { Entry(key: $0.key, user: $0.user) }.sorted(by: Self.precedes)
    }

    /// Adds the entry unless it is there already.
    mutating func insert(_ key: String, of user: Username) {
        let entry = Entry(key: key, user: user)
        let index = firstIndex(notBefore: entry)
        if index == sorted.count || !Self.equal(sorted[index], entry) { sorted.insert(entry, at: index) }
    }

    mutating func remove(_ key: String, of user: Username) {
        let entry = Entry(key: key, user: user)
        let index = firstIndex(notBefore: entry)
        if index < sorted.count, Self.equal(sorted[index], entry) { sorted.remove(at: index) }
    }

    /// Up to `limit` users whose key starts with `prefix`, in the keys' byte order, skipping
    /// `excluded` and those `isHidden` (at most the hidden ones are skipped).
    func search(
        prefix: String, limit: Int, excluding excluded: Username? = nil, isHidden: (Username) -> Bool = { _ in false }
    ) -> [Username] {
        var found: [Username] = []
        var index = firstIndex(notBefore: Entry(key: prefix, user: ""))
        while index < sorted.count, found.count < limit, sorted[index].key.utf8.starts(with: prefix.utf8) {
            if sorted[index].user != excluded, !isHidden(sorted[index].user) { found.append(sorted[index].user) }
            index += 1
        }
        return found
    }

    private func firstIndex(notBefore key: Entry) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if Self.precedes(sorted[middle], key) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private static func equal(_ lhs: Entry, _ rhs: Entry) -> Bool {
        lhs.key.utf8.elementsEqual(rhs.key.utf8) && lhs.user.utf8.elementsEqual(rhs.user.utf8)
    }

    /// Byte order, which is what a prefix run is contiguous in; equal keys by user.
    private static func precedes(_ lhs: Entry, _ rhs: Entry) -> Bool {
        if !lhs.key.utf8.elementsEqual(rhs.key.utf8) { return lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8) }
        return lhs.user.utf8.lexicographicallyPrecedes(rhs.user.utf8)
    }
}
