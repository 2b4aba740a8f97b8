import Synchronization

/// Deletions on /metrics (protocol.md, "Deletion and retention"): accounts deleted, publications
/// the operator removed (tombstones), and photo files removed because nobody owned them any more.
final class DeletionMetrics: Sendable {
    let accountsDeleted = Atomic<Int>(0)
    let publicationsRemoved = Atomic<Int>(0)
    let photosRemoved = Atomic<Int>(0)
    /// Chunks of deleted users' channels erased (`eraseChannels`).
    let erasureChunks = Atomic<Int>(0)
    /// The longest time the core spent in one request's erasure work, nanoseconds.
    let longestCoreTurn = Atomic<UInt64>(0)

    func observeCoreTurn(nanoseconds: UInt64) {
        var longest = longestCoreTurn.load(ordering: .relaxed)
        while nanoseconds > longest {
            let (exchanged, found) = longestCoreTurn.compareExchange(expected: longest, desired: nanoseconds, ordering: .relaxed)
            if exchanged { break }
            longest = found
        }
    }

    func prometheusText() -> String {
        var text = "# HELP huddle_accounts_deleted_total Accounts deleted, by their user or the operator.\n"
        text += "# TYPE huddle_accounts_deleted_total counter\n"
        text += "huddle_accounts_deleted_total \(accountsDeleted.load(ordering: .relaxed))\n"
        text += "# HELP huddle_publications_removed_total Publications the operator removed (left as tombstones).\n"
        text += "# TYPE huddle_publications_removed_total counter\n"
        text += "huddle_publications_removed_total \(publicationsRemoved.load(ordering: .relaxed))\n"
        text += "# HELP huddle_photos_removed_total Photo files removed from disk because nobody owned them any more.\n"
        text += "# TYPE huddle_photos_removed_total counter\n"
        text += "huddle_photos_removed_total \(photosRemoved.load(ordering: .relaxed))\n"
        text += "# HELP huddle_erasure_chunks_total Chunks of deleted users' channels erased, each in a turn of its own.\n"
        text += "# TYPE huddle_erasure_chunks_total counter\n"
        text += "huddle_erasure_chunks_total \(erasureChunks.load(ordering: .relaxed))\n"
        text += "# HELP huddle_erasure_turn_seconds_max The longest the core spent at once on erasing an account since the start.\n"
        text += "# TYPE huddle_erasure_turn_seconds_max gauge\n"
        text += "huddle_erasure_turn_seconds_max \(Double(longestCoreTurn.load(ordering: .relaxed)) / 1e9)\n"
        return text
    }
}
