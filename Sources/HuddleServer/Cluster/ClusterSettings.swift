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

    public init(redis: RedisEndpoint, nodeName: String, sharedDirectory: String) {
        self.redis = redis
        self.nodeName = nodeName
        self.sharedDirectory = sharedDirectory
    }
}
