/// Every username in byte order, for `user_search`'s prefix lookups: a binary search finds the
/// first match and the next `limit` names are the answer, rather than a scan of all accounts.
///
/// Derived from `Accounts` (rebuilt on restore, kept up by `apply(.signUp)`), so not durable.
/// Sign-ups pay the sorted insertion; searches are O(log n + limit).
struct UsernameIndex: Sendable {
    private var sorted: [Username] = []

    init() {}

    init(_ accounts: Accounts) {
        sorted = accounts.byUsername.keys.sorted(by: Self.precedes)
    }

    mutating func insert(_ username: Username) {
        let index = firstIndex(notBefore: username)
        if index == sorted.count || sorted[index] != username { sorted.insert(username, at: index) }
    }

    /// Up to `limit` usernames starting with `prefix` (canonical), in byte order, skipping
    /// `excluded`.
    func search(prefix: String, limit: Int, excluding excluded: Username? = nil) -> [Username] {
        var found: [Username] = []
        var index = firstIndex(notBefore: prefix)
        while index < sorted.count, found.count < limit, sorted[index].utf8.starts(with: prefix.utf8) {
            if sorted[index] != excluded { found.append(sorted[index]) }
            index += 1
        }
        return found
    }

    private func firstIndex(notBefore key: String) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if Self.precedes(sorted[middle], key) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Byte order, which is what a prefix run is contiguous in.
    private static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    mutating func remove(_ username: Username) {
        let index = firstIndex(notBefore: username)
        if index < sorted.count, sorted[index] == username { sorted.remove(at: index) }
    }
}
