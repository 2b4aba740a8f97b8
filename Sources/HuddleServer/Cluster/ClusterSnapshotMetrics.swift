import Synchronization

/// The snapshotter's side of a cluster node's `/metrics`: silent on a single node.
final class ClusterSnapshotMetrics: Sendable {
    /// Set once the node runs in a cluster: until then nothing is exposed.
    let active = Atomic<Bool>(false)
    /// The log position of the newest snapshot this node wrote and recorded.
    let position = Atomic<UInt64>(0)
    /// How long encoding and writing this node's last snapshot took, as a Double's bits.
    private let lastSecondsBits = Atomic<UInt64>(0)
    /// Log entries XTRIM removed behind the snapshots this node recorded.
    let logTrimmed = Atomic<Int>(0)

    init() {}

    var lastSeconds: Double {
        get { Double(bitPattern: lastSecondsBits.load(ordering: .relaxed)) }
        set { lastSecondsBits.store(newValue.bitPattern, ordering: .relaxed) }
    }

    func prometheusText() -> String {
        guard active.load(ordering: .relaxed) else { return "" }
        var text = "# HELP huddle_cluster_snapshot_position Log position of the newest snapshot this node wrote to the shared directory.\n"
        text += "# TYPE huddle_cluster_snapshot_position gauge\n"
        text += "huddle_cluster_snapshot_position \(position.load(ordering: .relaxed))\n"
        text += "# HELP huddle_cluster_snapshot_seconds Time this node's last snapshot took to encode, compress and write.\n"
        text += "# TYPE huddle_cluster_snapshot_seconds gauge\n"
        text += "huddle_cluster_snapshot_seconds \(lastSeconds)\n"
        text += "# HELP huddle_cluster_log_trimmed_total Entries of the shared log trimmed behind the older kept snapshot.\n"
        text += "# TYPE huddle_cluster_log_trimmed_total counter\n"
        text += "huddle_cluster_log_trimmed_total \(logTrimmed.load(ordering: .relaxed))\n"
        return text
    }
}
