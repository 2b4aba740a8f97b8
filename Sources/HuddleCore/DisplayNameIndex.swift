/// Every display name, folded (`DisplayNameRules.folded`), in byte order with its user, for
/// `user_search`'s prefix lookups: O(log n + limit) as `UsernameIndex`.
///
/// Derived from `Profiles` (rebuilt on restore, kept up by `apply(.setProfile)`), so not durable.
struct DisplayNameIndex: Sendable {
    private struct Entry: Sendable {
        var folded: String
        var user: Username
    }

    private var sorted: [Entry] = []

    init() {}

    init(_ profiles: Profiles) {
        for (user, profile) in profiles.byUser {
            if let name = profile.displayName { sorted.append(Entry(folded: DisplayNameRules.folded(name), user: user)) }
        }
        sorted.sort(by: Self.precedes)
    }

    /// Moves the user's entry from `old` to `new` (either nil: none).
    mutating func replace(_ old: String?, with new: String?, of user: Username) {
        if let old {
            let entry = Entry(folded: DisplayNameRules.folded(old), user: user)
            let index = firstIndex(notBefore: entry)
            if index < sorted.count, sorted[index].folded.utf8.elementsEqual(entry.folded.utf8), sorted[index].user == user { sorted.remove(at: index) }
        }
        if let new {
            let entry = Entry(folded: DisplayNameRules.folded(new), user: user)
            sorted.insert(entry, at: firstIndex(notBefore: entry))
        }
    }

    /// Up to `limit` users whose folded display name starts with `prefix` (folded), in the
    /// names' byte order, skipping `excluded`.
    func search(prefix: String, limit: Int, excluding excluded: Username? = nil) -> [Username] {
        var found: [Username] = []
        var index = firstIndex(notBefore: Entry(folded: prefix, user: ""))
        while index < sorted.count, found.count < limit, sorted[index].folded.utf8.starts(with: prefix.utf8) {
            if sorted[index].user != excluded { found.append(sorted[index].user) }
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

    /// By folded name, then user: a prefix run is contiguous, and equal names stay in a fixed order.
    private static func precedes(_ lhs: Entry, _ rhs: Entry) -> Bool {
        if !lhs.folded.utf8.elementsEqual(rhs.folded.utf8) { return lhs.folded.utf8.lexicographicallyPrecedes(rhs.folded.utf8) }
        return lhs.user.utf8.lexicographicallyPrecedes(rhs.user.utf8)
    }
}
