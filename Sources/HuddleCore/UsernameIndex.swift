/// Every username in byte order, for `user_search`'s prefix lookups: a binary search finds the
/// first match and the next `limit` names are the answer, rather than a scan of all accounts.
///
/// Derived from `Accounts` (rebuilt on restore, kept up by `apply(.signUp)`), so not durable.
/// Sign-ups pay the sorted insertion; searches are O(log n + limit).
struct UsernameIndex: Sendable {
    private var index = PrefixIndex()

    init() {}

    init(_ accounts: Accounts) {
        index = PrefixIndex(accounts.byUsername.keys.map { (key: $0, user: $0) })
    }

    mutating func insert(_ username: Username) {
        index.insert(username, of: username)
    }

    /// Up to `limit` usernames starting with `prefix` (canonical), in byte order, skipping
    /// `excluded` and those `isHidden` (blocked either way).
    func search(
        prefix: String, limit: Int, excluding excluded: Username? = nil, isHidden: (Username) -> Bool = { _ in false }
    ) -> [Username] {
        index.search(prefix: prefix, limit: limit, excluding: excluded, isHidden: isHidden)
    }

    mutating func remove(_ username: Username) {
        index.remove(username, of: username)
    }
}
