import ChildProcessExit
import Foundation
import RedisTestSupport

/// A Huddle cluster for one test (issue 14): a real `redis-server` (AOF, `appendfsync always`,
/// a free loopback port, a temporary directory: `RedisProcess`) and N `huddle` nodes joined to
/// it, each on its own port and data directory, all on one shared directory (photos,
/// snapshots). Nodes are numbered from 0. Every process is tied to the test process
/// (`ServerLauncher`) and killed, every directory removed, when the harness goes.
///
/// A node keeps its port and data directory across a kill and a restart, so a client that
/// knows the cluster's URLs finds it again; Redis restarts on its own port and AOF.
///
/// Given a `SentinelRedis`, nodes reach Redis through its Sentinels, and `redis` is its first
/// primary (the one a failover test kills).
final class ClusterHarness: @unchecked Sendable {
    let redis: RedisProcess
    let sentinelRedis: SentinelRedis?
    let sharedDirectory: URL
    /// Flags every node gets besides the cluster's own (a webhook, a presence grace, …).
    let nodeArguments: [String]
    private var nodes: [Node]

    private struct Node {
        let name: String
        var port: Int
        let dataDirectory: URL
        var server: DurableServer?
    }

    /// Starts Redis and `count` nodes, and waits until every node's /healthz says 200.
    init(nodes count: Int = 3, arguments: [String] = [], sentinel: SentinelRedis? = nil) async throws {
        if let sentinel {
            redis = sentinel.primary
        } else {
            redis = try await RedisProcess()
        }
        sentinelRedis = sentinel
        sharedDirectory = try ServerProcess.makeDataDirectory()
        nodeArguments = arguments
        nodes = try (1...count).map { number in
            Node(name: "node-\(number)", port: 0, dataDirectory: try ServerProcess.makeDataDirectory(), server: nil)
        }
        for index in nodes.indices { try await start(index, newPort: true) }
        for index in nodes.indices { try await waitUntilHealthy(index) }
    }

    deinit {
        for node in nodes {
            if let server = node.server, !server.process.hasExited { kill(server.pid, SIGKILL) }
            try? FileManager.default.removeItem(at: node.dataDirectory)
        }
        try? FileManager.default.removeItem(at: sharedDirectory)
    }

    var count: Int { nodes.count }
    var indices: Range<Int> { nodes.indices }

    func name(_ node: Int) -> String { nodes[node].name }
    func port(_ node: Int) -> Int { nodes[node].port }
    /// The node's `ws://` base URL (`/v1` is the client's to add).
    func url(_ node: Int) -> String { "ws://127.0.0.1:\(nodes[node].port)" }
    /// Every node's URL, in node order: what a client that moves on failure is given.
    var urls: [String] { nodes.indices.map(url) }

    /// The running process of `node` (its log, its pid); throws when it is down.
    func server(_ node: Int) throws -> DurableServer {
        guard let server = nodes[node].server, !server.process.hasExited else { throw TestFailure("\(nodes[node].name) is not running") }
        return server
    }

    /// The exit status and log of `node` once it exited by itself; nil while it runs.
    func exited(_ node: Int) -> (status: Int32, log: String)? {
        guard let server = nodes[node].server, let status = server.process.exitStatusIfExited else { return nil }
        return (status, server.logText)
    }

    /// Every node's log so far, each under its name: what a failing test prints.
    var logs: String {
        nodes.map { node in "=== \(node.name) (port \(node.port))\n\(node.server?.logText ?? "(never started)")" }
            .joined(separator: "\n") + "\n" + (sentinelRedis?.logText ?? "=== redis\n\(redis.logText)")
    }

    // MARK: Faults

    /// SIGKILL to `node`, waiting until the kernel reports it gone.
    func kill9(node: Int) {
        nodes[node].server?.kill9()
    }

    /// SIGTERM to `node` and its graceful exit; returns the exit status.
    @discardableResult
    func stop(node: Int) async throws -> Int32 {
        guard let server = nodes[node].server else { throw TestFailure("\(nodes[node].name) was never started") }
        return try await server.stop(timeout: 30)
    }

    /// Starts `node` again on its port and data directory, and waits until it is healthy.
    func restart(node: Int) async throws {
        if let server = nodes[node].server, !server.process.hasExited { throw TestFailure("restart of \(nodes[node].name), which still runs") }
        try await start(node, newPort: false)
        try await waitUntilHealthy(node)
    }

    /// Starts one more node, numbered after the others, and waits until it is healthy: a node
    /// joining a cluster that has run for a while. Returns its index.
    @discardableResult
    func addNode() async throws -> Int {
        nodes.append(Node(name: "node-\(nodes.count + 1)", port: 0, dataDirectory: try ServerProcess.makeDataDirectory(), server: nil))
        let index = nodes.count - 1
        try await start(index, newPort: true)
        try await waitUntilHealthy(index)
        return index
    }

    /// SIGKILL to redis-server, waiting until it is gone.
    func kill9Redis() async throws { try await redis.kill9() }

    /// redis-server again on its port and AOF (nodes reconnect by themselves).
    func restartRedis() async throws { try await redis.restart() }

    // MARK: Health

    /// Waits until `node` answers GET /healthz with 200: it reaches Redis and has caught up.
    func waitUntilHealthy(_ node: Int, timeout: Double = 60) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            guard let server = nodes[node].server else { throw TestFailure("\(nodes[node].name) was never started") }
            if let status = server.process.exitStatusIfExited {
                throw TestFailure("\(nodes[node].name) exited (\(status)) before it was healthy; log:\n\(server.logText)")
            }
            if (try? HTTPExchange(port: nodes[node].port, "GET", "/healthz"))?.status == 200 { return }
            guard Date() < deadline else {
                throw TestFailure("\(nodes[node].name) not healthy within \(timeout) s; log:\n\(server.logText)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The node's /metrics.
    func metrics(_ node: Int) throws -> PrometheusText { try PrometheusText.fetch(port: nodes[node].port) }

    /// `untilHolds` whose failure carries every node's log: what tells a wait that was wrong
    /// from a node whose reader never caught up.
    func untilHolds(_ what: String, timeout: Double = 20, _ condition: () throws -> Bool) async throws {
        do {
            try await HuddleServerTests.untilHolds(what, timeout: timeout, condition)
        } catch let failure as TestFailure {
            throw TestFailure("\(failure.description)\n\(logs)")
        }
    }

    // MARK: Starting

    private func arguments(for node: Node) -> [String] {
        ["--redis", sentinelRedis?.endpoint ?? redis.endpoint, "--node-name", node.name, "--shared-dir", sharedDirectory.path] + nodeArguments
    }

    /// Launches the node's process. A first start takes a free port, and another when some other
    /// process took it between the probe and the bind; a restart must have its own port back.
    /// A node refuses to start while its name's lease in Redis is held (ClusterLog: it expires a
    /// few seconds after its holder stops), which a node killed a moment ago, or an attempt that
    /// claimed it before its bind failed, still does: the start is tried again until it expires.
    private func start(_ index: Int, newPort: Bool) async throws {
        let deadline = Date().addingTimeInterval(60)
        var refusals: [String] = []
        while true {
            if newPort { nodes[index].port = try FreePort.take() }
            let node = nodes[index]
            switch try await DurableServer.launch(arguments(for: node), dataDirectory: node.dataDirectory, port: node.port, timeout: 60) {
            case .listening(let server):
                nodes[index].server = server
                return
            case .exited(let status, let log):
                let portTaken = newPort && log.contains("already in use")
                guard portTaken || log.contains("already has this name"), Date() < deadline else {
                    throw TestFailure("\(node.name) exited with \(status) instead of listening; log:\n\(log)\nearlier refusals:\n\(refusals.joined(separator: "\n"))")
                }
                refusals.append(log)
                if !portTaken { try await Task.sleep(for: .milliseconds(200)) }
            }
        }
    }
}
