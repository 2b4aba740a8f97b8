import Synchronization

/// Counters for `GET /metrics`. Each I/O loop increments only its own set (relaxed atomics on
/// a cache line no other writer touches); a scrape sums them. Error counts and command
/// latencies are written by the core thread and scraped under a lock, a few times a minute.
final class ServerMetrics: Sendable {
    final class LoopCounters: Sendable {
        let connectionsAccepted = Atomic<Int>(0)
        let connectionsClosed = Atomic<Int>(0)
        let webSocketsOpened = Atomic<Int>(0)
        let webSocketsClosed = Atomic<Int>(0)
        let messagesReceived = Atomic<Int>(0)
        let messagesSent = Atomic<Int>(0)
        /// Events copied to a subscriber's queue by a fan-out (one per recipient).
        let deliveries = Atomic<Int>(0)
        /// Bytes waiting in this loop's write queues (updated once per flush, not per message).
        let outboundQueuedBytes = Atomic<Int>(0)
        /// Connections now behind (protocol.md, "Backpressure").
        let readersBehind = Atomic<Int>(0)
        let publishersHeld = Atomic<Int>(0)
        let slowConsumersOverLimit = Atomic<Int>(0)
        let slowConsumersTooOld = Atomic<Int>(0)
        /// Keeps neighbouring loops' counters off this cache line.
        private let padding = (0, 0, 0, 0, 0, 0, 0, 0)

        struct Values {
            var connectionsAccepted = 0, connectionsClosed = 0, webSocketsOpened = 0, webSocketsClosed = 0
            var messagesReceived = 0, messagesSent = 0, deliveries = 0
            var outboundQueuedBytes = 0, readersBehind = 0, publishersHeld = 0, slowConsumersOverLimit = 0, slowConsumersTooOld = 0
        }

        func countSlowConsumerClose(_ cause: SlowConsumerCause) {
            switch cause {
            case .queueLimit: slowConsumersOverLimit.add(1, ordering: .relaxed)
            case .queueAge: slowConsumersTooOld.add(1, ordering: .relaxed)
            }
        }

        var values: Values {
            Values(
                connectionsAccepted: connectionsAccepted.load(ordering: .relaxed),
                connectionsClosed: connectionsClosed.load(ordering: .relaxed),
                webSocketsOpened: webSocketsOpened.load(ordering: .relaxed),
                webSocketsClosed: webSocketsClosed.load(ordering: .relaxed),
                messagesReceived: messagesReceived.load(ordering: .relaxed),
                messagesSent: messagesSent.load(ordering: .relaxed),
                deliveries: deliveries.load(ordering: .relaxed),
                outboundQueuedBytes: outboundQueuedBytes.load(ordering: .relaxed),
                readersBehind: readersBehind.load(ordering: .relaxed),
                publishersHeld: publishersHeld.load(ordering: .relaxed),
                slowConsumersOverLimit: slowConsumersOverLimit.load(ordering: .relaxed),
                slowConsumersTooOld: slowConsumersTooOld.load(ordering: .relaxed))
        }
    }

    private let loops: [LoopCounters]
    private let errors = Mutex<[String: Int]>([:])
    private let latencies = Mutex<[String: LatencyHistogram]>([:])
    private let budgetRefusals = Mutex<[String: Int]>([:])
    /// Users and addresses the fair-share budgets track now (the others are at full budget).
    let budgetOwners = Atomic<Int>(0)
    /// Retried writes answered with their kept first result, by op.
    private let duplicates = Mutex<[String: Int]>([:])
    let push = PushMetrics()
    let passwordResets = PasswordResetMetrics()
    let photoUploads: PhotoUploads
    let passwordHashes = PasswordHashMetrics()
    let identity = IdentityMetrics()
    let clusterSnapshots = ClusterSnapshotMetrics()
    let deletions = DeletionMetrics()
    /// The export archives' slots and counters.
    let exports: ExportGate
    /// Bytes of requests held (decompressed) behind sign-ins still being decided, all
    /// connections together: a gauge, and the server-wide bound's running total.
    let heldBehindSignIn = Atomic<Int>(0)

    /// Cluster mode's log position, lag and Redis round trips; nil for a single node.
    let cluster: ClusterMetrics?

    init(loopCount: Int, photoUploads: PhotoUploads, exports: ExportGate = ExportGate(maxConcurrent: ServerConfiguration().maxConcurrentExports), cluster: ClusterMetrics? = nil) {
        loops = (0..<loopCount).map { _ in LoopCounters() }
        self.photoUploads = photoUploads
        self.exports = exports
        self.cluster = cluster
    }

    func loop(_ index: Int) -> LoopCounters { loops[index] }

    func countError(_ code: String) {
        errors.withLock { $0[code, default: 0] += 1 }
    }

    func countBudgetRefusal(_ budget: String) {
        budgetRefusals.withLock { $0[budget, default: 0] += 1 }
    }

    func countDuplicate(op: String) {
        duplicates.withLock { $0[op, default: 0] += 1 }
    }

    func observe(op: String, seconds: Double) {
        latencies.withLock { $0[op, default: LatencyHistogram()].observe(seconds) }
    }

    /// Totals for the activity summary line.
    struct Traffic {
        var openConnections = 0, openWebSockets = 0, messagesReceived = 0, messagesSent = 0
        /// Every refusal class counted below, by kind.
        var refusals = RefusalCounts()
    }

    func traffic() -> Traffic {
        let values = loops.map(\.values)
        func sum(_ counter: KeyPath<LoopCounters.Values, Int>) -> Int { values.reduce(0) { $0 + $1[keyPath: counter] } }
        return Traffic(
            openConnections: sum(\.connectionsAccepted) - sum(\.connectionsClosed),
            openWebSockets: sum(\.webSocketsOpened) - sum(\.webSocketsClosed),
            messagesReceived: sum(\.messagesReceived), messagesSent: sum(\.messagesSent),
            refusals: refusalCounts(sum))
    }

    private func refusalCounts(_ sum: (KeyPath<LoopCounters.Values, Int>) -> Int) -> RefusalCounts {
        var refusals = RefusalCounts()
        for (code, count) in errors.withLock({ $0 }) { refusals.add(code, count) }
        for (budget, count) in budgetRefusals.withLock({ $0 }) { refusals.add(budget: budget, count) }
        refusals.add("slow_consumer_queue_limit", sum(\.slowConsumersOverLimit))
        refusals.add("slow_consumer_queue_age", sum(\.slowConsumersTooOld))
        refusals.add("publisher_held", sum(\.publishersHeld))
        for reason in PushMetrics.DropReason.allCases { refusals.add("push_dropped_\(reason.rawValue)", push.dropped(reason)) }
        for (reason, count) in photoUploads.refusalCounts() { refusals.add("photo_upload_\(reason)", count) }
        return refusals
    }

    /// The Prometheus text exposition format (version 0.0.4).
    func prometheusText() -> String {
        let values = loops.map(\.values)
        func sum(_ counter: KeyPath<LoopCounters.Values, Int>) -> Int { values.reduce(0) { $0 + $1[keyPath: counter] } }
        let accepted = sum(\.connectionsAccepted)
        let closed = sum(\.connectionsClosed)
        var text = ""
        let webSockets = sum(\.webSocketsOpened) - sum(\.webSocketsClosed)
        text += "# HELP huddle_connections Connections currently open: WebSocket sessions, and others (handshakes, HTTP).\n"
        text += "# TYPE huddle_connections gauge\n"
        text += "huddle_connections{state=\"websocket\"} \(webSockets)\n"
        text += "huddle_connections{state=\"other\"} \(accepted - closed - webSockets)\n"
        text += "# HELP huddle_connections_accepted_total TCP connections accepted.\n# TYPE huddle_connections_accepted_total counter\n"
        text += "huddle_connections_accepted_total \(accepted)\n"
        text += "# HELP huddle_websockets_opened_total WebSocket upgrades completed.\n# TYPE huddle_websockets_opened_total counter\n"
        text += "huddle_websockets_opened_total \(sum(\.webSocketsOpened))\n"
        text += "# HELP huddle_messages_received_total WebSocket data messages received.\n# TYPE huddle_messages_received_total counter\n"
        text += "huddle_messages_received_total \(sum(\.messagesReceived))\n"
        text += "# HELP huddle_messages_sent_total WebSocket data messages sent (replies, events, deliveries).\n# TYPE huddle_messages_sent_total counter\n"
        text += "huddle_messages_sent_total \(sum(\.messagesSent))\n"
        text += "# HELP huddle_deliveries_total Events delivered to subscribers by fan-out.\n# TYPE huddle_deliveries_total counter\n"
        text += "huddle_deliveries_total \(sum(\.deliveries))\n"
        text += "# HELP huddle_outbound_queued_bytes Bytes waiting in connections' write queues.\n# TYPE huddle_outbound_queued_bytes gauge\n"
        text += "huddle_outbound_queued_bytes \(sum(\.outboundQueuedBytes))\n"
        text += "# HELP huddle_readers_behind Connections behind, holding their publishers back.\n# TYPE huddle_readers_behind gauge\n"
        text += "huddle_readers_behind \(sum(\.readersBehind))\n"
        text += "# HELP huddle_publishers_held_total /broadcast publishers whose socket stopped being read while a reader was behind.\n"
        text += "# TYPE huddle_publishers_held_total counter\n"
        text += "huddle_publishers_held_total \(sum(\.publishersHeld))\n"
        text += "# HELP huddle_slow_consumer_closes_total Connections closed 1008 for not reading, by reason.\n"
        text += "# TYPE huddle_slow_consumer_closes_total counter\n"
        text += "huddle_slow_consumer_closes_total{reason=\"queue_limit\"} \(sum(\.slowConsumersOverLimit))\n"
        text += "huddle_slow_consumer_closes_total{reason=\"queue_age\"} \(sum(\.slowConsumersTooOld))\n"
        text += "# HELP huddle_errors_total Error replies and refusals, by code.\n# TYPE huddle_errors_total counter\n"
        for (code, count) in errors.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            text += "huddle_errors_total{code=\"\(code)\"} \(count)\n"
        }
        text += "# HELP huddle_budget_refusals_total Requests refused rate_limited because their user (or address) was over a fair share, by budget.\n"
        text += "# TYPE huddle_budget_refusals_total counter\n"
        let refusals = budgetRefusals.withLock { $0 }
        for budget in UsageBudgets.Budget.allCases {
            text += "huddle_budget_refusals_total{budget=\"\(budget.rawValue)\"} \(refusals[budget.rawValue] ?? 0)\n"
        }
        text += "# HELP huddle_budget_owners Users and addresses below a full fair-share budget.\n# TYPE huddle_budget_owners gauge\n"
        text += "huddle_budget_owners \(budgetOwners.load(ordering: .relaxed))\n"
        text += "# HELP huddle_duplicate_writes_total Retried writes (same client_id) answered with the first result, changing nothing, by op.\n"
        text += "# TYPE huddle_duplicate_writes_total counter\n"
        for (op, count) in duplicates.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            text += "huddle_duplicate_writes_total{op=\"\(op)\"} \(count)\n"
        }
        text += "# HELP huddle_command_duration_seconds Time from a request's arrival at the core to its reply, by op.\n"
        text += "# TYPE huddle_command_duration_seconds histogram\n"
        for (op, histogram) in latencies.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            text += histogram.prometheusLines(name: "huddle_command_duration_seconds", labels: "op=\"\(op)\"")
        }
        text += push.prometheusText()
        text += passwordResets.prometheusText()
        text += photoUploads.prometheusText()
        text += passwordHashes.prometheusText()
        text += identity.prometheusText()
        text += clusterSnapshots.prometheusText()
        text += deletions.prometheusText()
        text += exports.prometheusText()
        text += cluster?.prometheusText() ?? ""
        text += "# HELP huddle_signin_held_bytes Bytes of requests waiting behind sign-ins still being decided.\n"
        text += "# TYPE huddle_signin_held_bytes gauge\n"
        text += "huddle_signin_held_bytes \(heldBehindSignIn.load(ordering: .relaxed))\n"
        text += ProcessMetrics.prometheusText()
        return text
    }
}

/// A fixed-bucket latency histogram in Prometheus's cumulative form.
struct LatencyHistogram: Sendable {
    static let bounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]
    private var counts = [Int](repeating: 0, count: LatencyHistogram.bounds.count + 1)
    private var total = 0.0

    mutating func observe(_ seconds: Double) {
        let index = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
        counts[index] += 1
        total += seconds
    }

    func prometheusLines(name: String, labels: String) -> String {
        var text = ""
        var cumulative = 0
        for (index, bound) in Self.bounds.enumerated() {
            cumulative += counts[index]
            text += "\(name)_bucket{\(labels),le=\"\(bound)\"} \(cumulative)\n"
        }
        cumulative += counts[Self.bounds.count]
        text += "\(name)_bucket{\(labels),le=\"+Inf\"} \(cumulative)\n"
        text += "\(name)_sum{\(labels)} \(total)\n"
        text += "\(name)_count{\(labels)} \(cumulative)\n"
        return text
    }
}
