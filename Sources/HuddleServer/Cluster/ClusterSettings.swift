import HuddleRedis

/// Cluster mode (`--redis`): the node's place in a cluster whose durable log is the Redis
/// stream `huddle:log` (docs/ARCHITECTURE.md, "Cluster mode").
public struct ClusterSettings: Sendable {
    public var redis: RedisEndpoint
    /// Unique per cluster: the node's lease `huddle:node:<name>` and the writer of its entries.
    public var nodeName: String
    /// Read and written by every node: photos (and snapshots).
    public var sharedDirectory: String
    /// Entries a node may be behind the log's top and still report itself healthy (`/healthz`).
    public var maxHealthyLag: UInt64 = 100
    /// Replicas that must have a turn's entry before its replies say ok (`WAIT`); 0 = the
    /// primary's fsync is enough.
    public var waitReplicas = 0
    /// How long a turn waits for them; short of them by then, its writes are answered
    /// `unavailable` (the entry stays in the log and is applied: retries are idempotent).
    public static let waitMilliseconds = 1_000

    public init(redis: RedisEndpoint, nodeName: String, sharedDirectory: String) {
        self.redis = redis
        self.nodeName = nodeName
        self.sharedDirectory = sharedDirectory
    }
}
