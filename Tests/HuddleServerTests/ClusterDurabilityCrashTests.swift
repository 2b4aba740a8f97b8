import ChildProcessExit
import Foundation
import Testing

/// Issue 14, acceptance 5: the durability crash test (DurabilityCrashTests) on a cluster. The
/// same Python writers publish with a client_id, spread over three nodes, journaling every
/// acknowledgement, while nodes and redis-server are killed with SIGKILL at random moments and
/// restarted on their own files. At the end, every node holds every acknowledged publish
/// exactly once, at the offset its reply named, offsets contiguous. Every third fault kills
/// Redis, the others a random node. `HUDDLE_CLUSTER_FAULTS` (default 6) sets the number of
/// faults; the long run is
///
///     HUDDLE_CLUSTER_FAULTS=100 swift test --filter ClusterDurabilityCrashTests
@Suite(.ownThread) struct ClusterDurabilityCrashTests {
    static var faults: Int { Int(ProcessInfo.processInfo.environment["HUDDLE_CLUSTER_FAULTS"] ?? "") ?? 6 }

    @Test func acknowledgedPublishesSurviveRandomKillsOfNodesAndRedis() async throws {
        let faults = Self.faults
        let started = Date()
        let cluster = try await ClusterHarness()
        let writers = try CrashWriters(writers: 6, clientIDs: true)
        defer { writers.terminate() }
        var up = Set(cluster.indices)
        func pointWriters() throws { try writers.point(at: up.sorted().map(cluster.url)) }
        try pointWriters()
        try await writers.awaitProgress(timeout: 60) { cluster.logs }
        var nodeKills = 0
        var redisKills = 0

        for fault in 1...faults {
            // The kill lands anywhere in a write: before, during or after its append.
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...250)))
            if fault % 3 == 0 {
                try await cluster.kill9Redis()
                redisKills += 1
                try await cluster.restartRedis()
                for node in cluster.indices { try await cluster.waitUntilHealthy(node) }
            } else {
                let node = cluster.indices.randomElement()!
                cluster.kill9(node: node)
                nodeKills += 1
                up.remove(node)
                try pointWriters()
                // The writers go on through the other nodes meanwhile.
                try await writers.awaitProgress(timeout: 60) { cluster.logs }
                try await cluster.restart(node: node)
                up.insert(node)
                try pointWriters()
            }
            try await writers.awaitProgress(timeout: 60) { cluster.logs }
        }
        let writerSummary = try await writers.finish()

        let results = try await writers.checkEveryNode(of: cluster)
        for (node, result) in results.enumerated() { #expect(result["ok"] as? Bool == true, "node \(node + 1)") }
        #expect((results.first?["acked"] as? Int ?? 0) > 0)
        #expect(Set(results.map { $0["publications"] as? Int ?? -1 }).count == 1, "every node holds the same publications")

        let seconds = Date().timeIntervalSince(started)
        let result = results.first ?? [:]
        print("""
            cluster crash run: faults=\(faults) node-kills=\(nodeKills) redis-kills=\(redisKills) acked-checked=\(result["acked"] ?? "?") \
            in-doubt-present=\(result["in_doubt_present"] ?? "?") in-doubt-absent=\(result["in_doubt_absent"] ?? "?") \
            publications=\(result["publications"] ?? "?") seconds=\(String(format: "%.1f", seconds)) writer=\(writerSummary)
            """)
        if results.allSatisfy({ $0["ok"] as? Bool == true }) {
            writers.removeFiles()
        } else {
            print("kept for inspection: journals \(writers.work.path)\n\(cluster.logs)")
        }
    }
}

extension CrashWriters {
    /// Runs the checker against every node of `cluster`, each once it has applied every write
    /// the journals hold: a write acknowledged by a node follows everything acknowledged before
    /// it in the log, so one is made on each node first. `expectingOK: false` only measures.
    func checkEveryNode(of cluster: ClusterHarness, expectingOK: Bool = true) async throws -> [[String: Any]] {
        let barrier = try ProtocolClient(port: cluster.port(0))
        let account = ["username": "barrier", "email": "barrier@example.com", "password": ProtocolClient.password]
        var signedUp = try await Self.write(barrier, "signup", account, on: 0, of: cluster)
        if signedUp == nil {
            // A refused sign-up stored nothing, unless the refusal only said the node lost its
            // link while the entry reached the log: then the account is there.
            signedUp = try barrier.ok("login", ["login": "barrier", "password": ProtocolClient.password])
        }
        guard let token = signedUp?["token"] as? String else { throw TestFailure("the barrier's sign-up gave no token") }
        var results: [[String: Any]] = []
        for node in cluster.indices {
            let client = try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(node))
            _ = try await Self.write(client, "publish", ["channel": "room:barrier", "data": "from node \(node + 1)"], on: node, of: cluster)
            results.append(try await check(url: cluster.url(node), expectingOK: expectingOK))
        }
        return results
    }

    /// `op` on `node`, sent again while the node answers `unavailable`: after a failover a node
    /// may still be waiting out its reconnect delay when others already write (a refused write
    /// stored nothing). The reply once it succeeded; nil when a retried sign-up found its
    /// account taken (an earlier try's entry reached the log after all).
    private static func write(
        _ client: ProtocolClient, _ op: String, _ fields: JSONObject, on node: Int, of cluster: ClusterHarness
    ) async throws -> JSONObject? {
        var result: JSONObject?
        var refused = false
        try await cluster.untilHolds("node \(node + 1) taking writes again", timeout: 90) {
            let reply = try client.request(op, fields)
            if JSON.bool(reply["ok"]) == true {
                result = reply["result"] as? JSONObject ?? [:]
                return true
            }
            let code = (reply["error"] as? JSONObject)?["code"] as? String
            if code == "username_taken", op == "signup", refused { return true }
            guard code == "unavailable" else { throw TestFailure("\(op) on node \(node + 1) failed: \(JSON.text(reply))") }
            refused = true
            return false
        }
        return result
    }
}
