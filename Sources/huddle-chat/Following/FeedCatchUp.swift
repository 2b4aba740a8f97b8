import HuddleClient
import HuddleProtocol

/// The newest post huddle-chat knows of, so that after a reconnect — feed events are live only,
/// nothing replays the ones sent while it was away — it can show the posts that came meanwhile,
/// each once, even when some of them also arrive live while the catch-up is on its way.
struct FeedCatchUp {
    /// The newest post id shown or seen; nil until the session's first look at the feed.
    private(set) var newest: UInt64?
    /// A catch-up under way: what was newest when the connection dropped, and the posts shown
    /// live since then.
    private var pending: (after: UInt64, shownMeanwhile: Set<UInt64>)?

    /// A new session: nothing known until `baseline`.
    mutating func reset() {
        newest = nil
        pending = nil
    }

    /// The session's first look at the feed: its newest post (nil: the feed is empty).
    mutating func baseline(_ id: UInt64?) {
        newest = max(newest ?? 0, id ?? 0)
    }

    /// A post shown live.
    mutating func saw(_ id: UInt64) {
        if newest != nil { newest = max(newest ?? 0, id) }
        pending?.shownMeanwhile.insert(id)
    }

    /// The connection came back: true when a catch-up should read the feed's first page (not
    /// before the baseline is known, and not twice at once).
    mutating func begin() -> Bool {
        guard let newest, pending == nil else { return false }
        pending = (newest, [])
        return true
    }

    /// The feed's first page after a reconnect (newest first): the posts that came while away
    /// and were not shown live since, oldest first, and whether older ones than the page holds
    /// came too.
    mutating func finish(_ page: FeedPage) -> (missed: [FeedPost], more: Bool) {
        guard let (after, shown) = pending else { return ([], false) }
        pending = nil
        let newer = page.posts.filter { $0.id > after }
        for post in newer { saw(post.id) }
        let more = newer.count == page.posts.count && page.nextBefore != nil
        return (newer.filter { !shown.contains($0.id) }.reversed(), more)
    }

    /// The catch-up's read failed: what it would have shown is left to `/feed`.
    mutating func abandon() {
        pending = nil
    }
}
