import ChildProcessExit
import Foundation
import HuddleWebSocket
import RedisTestSupport
import Testing

/// A session opened on one node and used at once on another (a client whose node died right
/// after it signed in moves to the next URL): the second node may not have applied the
/// session's log entry yet. It applies the log up to its top before refusing the token.
@Suite(.ownThread) struct ClusterTokenCatchUpTests {
    @Test func aTokenFromAnotherNodeIsAcceptedBeforeThisNodeHasReadItsEntryAndAnUnknownOneStillRefused() async throws {
        let cluster = try await ClusterHarness(nodes: 2)
        let lagging = try cluster.server(1)
        try await untilHolds("both nodes' readers are reading the log") { try Self.logReaders(redis: cluster.redis).count == 2 }
        // Node 2 stopped, its reader's blocking read times out at Redis and is cut there: the
        // signup's entry does not reach it by itself, and its reader only reconnects after
        // it is resumed — the token sign-in comes first.
        kill(lagging.pid, SIGSTOP)
        var resumed = false
        defer { if !resumed { kill(lagging.pid, SIGCONT) } }
        let reader = try await Self.idleLogReader(redis: cluster.redis)
        _ = try Self.redisCLI(cluster.redis, ["CLIENT", "KILL", "ID", reader])
        let (_, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        kill(lagging.pid, SIGCONT)
        resumed = true

        let moved = try ProtocolClient(port: cluster.port(1), credential: .header(token))
        let session = try moved.nextEvent("session", timeout: 10)
        #expect((session["user"] as? JSONObject)?["username"] as? String == "alice", "\(JSON.text(session))")
        #expect((try moved.ok("whoami")["user"] as? JSONObject)?["username"] as? String == "alice")

        let stranger = try ProtocolClient(port: cluster.port(1))
        #expect(try stranger.errorCode("auth", ["token": String(repeating: "B", count: 43)]) == "invalid_token")
        let refused = try ProtocolClient(port: cluster.port(1), credential: .header(String(repeating: "C", count: 43)))
        #expect(try refused.nextEvent("auth_failed")["error"].flatMap { ($0 as? JSONObject)?["code"] as? String } == "invalid_token")
        #expect(try refused.closeCode() == WebSocketCloseCode(rawValue: 4001))
        #expect(try cluster.metrics(1).value("huddle_cluster_token_signins_waiting") == 0)
    }

    /// The wait is bounded: with Redis stopped, the read of the log's top never answers, and an
    /// unknown token is refused when the wait's time is up, as it would be at once otherwise.
    @Test func anUnknownTokenIsRefusedWhenTheLogCannotBeReadInTime() async throws {
        let cluster = try await ClusterHarness(nodes: 1)
        let (_, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        cluster.redis.pause()
        var resumed = false
        defer { if !resumed { cluster.redis.resume() } }
        let refused = try ProtocolClient(port: cluster.port(0), credential: .header(String(repeating: "C", count: 43)))
        let failed = try refused.nextEvent("auth_failed", timeout: 20)
        #expect((failed["error"] as? JSONObject)?["code"] as? String == "invalid_token", "\(JSON.text(failed))")
        #expect(try refused.closeCode() == WebSocketCloseCode(rawValue: 4001))
        // A known token is not held at all.
        let known = try ProtocolClient(port: cluster.port(0), credential: .header(token))
        #expect((try known.nextEvent("session")["user"] as? JSONObject)?["username"] as? String == "alice")
        cluster.redis.resume()
        resumed = true
        #expect(try cluster.metrics(0).value("huddle_cluster_token_signins_waiting") == 0)
    }

    /// The nodes' log readers as Redis sees them: the connections whose last command was XREAD.
    static func logReaders(redis: RedisProcess) throws -> [(id: String, idle: Int, blocked: Bool)] {
        try redisCLI(redis, ["CLIENT", "LIST"]).split(separator: "\n").compactMap { line in
            var fields: [Substring: Substring] = [:]
            for pair in line.split(separator: " ") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[parts[0]] = parts[1] }
            }
            guard fields["cmd"] == "xread", let id = fields["id"], let idle = fields["idle"].flatMap({ Int($0) }) else { return nil }
            return (String(id), idle, fields["flags"]?.contains("b") == true)
        }
    }

    /// The ID at Redis of a stopped node's log reader: the one idle past the read's 1 s block
    /// and no longer blocked (a running node's reader reads again at least every second).
    static func idleLogReader(redis: RedisProcess) async throws -> String {
        var found: String?
        try await untilHolds("the stopped node's reader is idle at Redis") {
            found = try logReaders(redis: redis).first { $0.idle >= 2 && !$0.blocked }?.id
            return found != nil
        }
        return found!
    }

    static func redisCLI(_ redis: RedisProcess, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["redis-cli", "-p", "\(redis.port)"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
