import Synchronization

/// Deletions on /metrics (protocol.md, "Deletion and retention"): accounts deleted, publications
/// the operator removed (tombstones), and photo files removed because nobody owned them any more.
final class DeletionMetrics: Sendable {
    let accountsDeleted = Atomic<Int>(0)
    let publicationsRemoved = Atomic<Int>(0)
    let photosRemoved = Atomic<Int>(0)

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
        return text
    }
}
