/// Every display name, folded (`DisplayNameRules.folded`), with its user, for `user_search`.
///
/// Derived from `Profiles` (rebuilt on restore, kept up by `apply(.setProfile)`), so not durable.
struct DisplayNameIndex: Sendable {
    private var index = PrefixIndex()

    init() {}

    init(_ profiles: Profiles) {
        index = PrefixIndex(profiles.byUser.compactMap { user, profile in
            profile.displayName.map { (key: DisplayNameRules.folded($0), user: user) }
        })
    }

    /// Moves the user's entry from `old` to `new` (either nil: none).
    mutating func replace(_ old: String?, with new: String?, of user: Username) {
        if let old { index.remove(DisplayNameRules.folded(old), of: user) }
        if let new { index.insert(DisplayNameRules.folded(new), of: user) }
    }

    /// Up to `limit` users whose display name starts with `prefix` (folded), in the folded
    /// names' byte order, skipping `excluded` and those `isHidden` (blocked either way).
    func search(
        prefix: String, limit: Int, excluding excluded: Username? = nil, isHidden: (Username) -> Bool = { _ in false }
    ) -> [Username] {
        index.search(prefix: DisplayNameRules.folded(prefix), limit: limit, excluding: excluded, isHidden: isHidden)
    }
}
