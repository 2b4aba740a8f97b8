/// The Redis keys every node of a cluster shares (docs/ARCHITECTURE.md, "Cluster mode").
enum ClusterKeys {
    /// The shared log: a stream whose entry IDs are log positions, `P-0`.
    static let log = "huddle:log"
    /// The lease of the one node that writes snapshots.
    static let snapshotter = "huddle:snapshotter"
    /// The snapshots in the shared directory: a sorted set of file names scored by position.
    static let snapshots = "huddle:snapshots"
}
