import Synchronization

/// What cluster mode shows on `/metrics` and decides `/healthz` from. Written by the core
/// thread, read by any I/O loop.
final class ClusterMetrics: Sendable {
    /// The position of the last log entry this node applied.
    let position = Atomic<UInt64>(0)
    /// The log's top as last seen (its newest entry's position).
    let top = Atomic<UInt64>(0)
    /// The top was read from Redis at least once (until then the lag is unknown).
    let topKnown = Atomic<Bool>(false)
    let appendConflicts = Atomic<Int>(0)
    /// Appends fewer replicas than `--redis-wait-replicas` acknowledged in time.
    let waitShortfalls = Atomic<Int>(0)
    /// Times this node found the log had lost entries it applied (a Redis failover) and rebuilt.
    let lostEntryRebuilds = Atomic<Int>(0)
    /// Token sign-ins this node did not know, waiting to apply the log up to its top (`TokenCatchUp`).
    let tokenSignInsWaiting = Atomic<Int>(0)
    /// Whether the writer's connection to Redis is up.
    let writerConnected = Atomic<Bool>(false)
    private let roundTrips = Mutex(LatencyHistogram())
    let maxHealthyLag: UInt64

    init(maxHealthyLag: UInt64) { self.maxHealthyLag = maxHealthyLag }

    var lag: UInt64 {
        let top = top.load(ordering: .relaxed)
        let position = position.load(ordering: .relaxed)
        return top > position ? top - position : 0
    }

    /// Serving: writes can be logged, and this node's copy is close to the log's top.
    var healthy: Bool { writerConnected.load(ordering: .relaxed) && topKnown.load(ordering: .relaxed) && lag <= maxHealthyLag }

    func observeAppend(seconds: Double) {
        roundTrips.withLock { $0.observe(seconds) }
    }

    func prometheusText() -> String {
        var text = ""
        text += "# HELP huddle_cluster_log_position Position of the last shared-log entry this node applied.\n"
        text += "# TYPE huddle_cluster_log_position gauge\n"
        text += "huddle_cluster_log_position \(position.load(ordering: .relaxed))\n"
        text += "# HELP huddle_cluster_log_lag_entries Entries between the shared log's top and this node's position.\n"
        text += "# TYPE huddle_cluster_log_lag_entries gauge\n"
        text += "huddle_cluster_log_lag_entries \(lag)\n"
        text += "# HELP huddle_cluster_append_conflicts_total Turns whose append found its position taken by another node (rolled back, decided again).\n"
        text += "# TYPE huddle_cluster_append_conflicts_total counter\n"
        text += "huddle_cluster_append_conflicts_total \(appendConflicts.load(ordering: .relaxed))\n"
        text += "# HELP huddle_redis_wait_shortfalls_total Turns whose entry fewer replicas than --redis-wait-replicas acknowledged in time (answered unavailable).\n"
        text += "# TYPE huddle_redis_wait_shortfalls_total counter\n"
        text += "huddle_redis_wait_shortfalls_total \(waitShortfalls.load(ordering: .relaxed))\n"
        text += "# HELP huddle_cluster_lost_entry_rebuilds_total Times this node found the shared log had lost entries it applied (a Redis failover; never acknowledged writes) and rebuilt its state from a snapshot and the log.\n"
        text += "# TYPE huddle_cluster_lost_entry_rebuilds_total counter\n"
        text += "huddle_cluster_lost_entry_rebuilds_total \(lostEntryRebuilds.load(ordering: .relaxed))\n"
        text += "# HELP huddle_cluster_token_signins_waiting Token sign-ins naming a session this node has not applied yet, waiting (at most 2 s) to catch up with the log.\n"
        text += "# TYPE huddle_cluster_token_signins_waiting gauge\n"
        text += "huddle_cluster_token_signins_waiting \(tokenSignInsWaiting.load(ordering: .relaxed))\n"
        text += "# HELP huddle_redis_connected Whether the node's log writer is connected to Redis (1) or not (0).\n"
        text += "# TYPE huddle_redis_connected gauge\n"
        text += "huddle_redis_connected \(writerConnected.load(ordering: .relaxed) ? 1 : 0)\n"
        text += "# HELP huddle_redis_round_trip_seconds Time from sending a turn's append to Redis to its outcome.\n"
        text += "# TYPE huddle_redis_round_trip_seconds histogram\n"
        text += roundTrips.withLock { $0 }.prometheusLines(name: "huddle_redis_round_trip_seconds", labels: "command=\"append\"")
        return text
    }
}
