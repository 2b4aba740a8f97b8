import ChildProcessExit
import Foundation
import RedisTestSupport
import Testing

/// What a Redis failover that loses the log's top does to the nodes (docs/ARCHITECTURE.md,
/// "Cluster mode", failover): an append WAIT refused (never acknowledged) that nodes had read
/// and applied from the old primary, missing on the promoted replica. The state is made
/// directly in a real redis-server, in one script: the stream rebuilt without its newest
/// entries (the promoted replica's stream), and in one test another entry in their place (a
/// node that appended there first). The nodes that applied the lost entries must rebuild their
/// state from the log, never append on top of a state no other node has.
@Suite(.ownThread) struct ClusterLostEntryTests {
    /// Alice and Bob, friends, on `port`, Alice subscribed to their room.
    private static func friends(port: Int, _ cluster: ClusterHarness) async throws -> (alice: ProtocolClient, bob: ProtocolClient, room: String) {
        let (alice, _) = try ProtocolClient.signedUp("alice", port: port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: port)
        try alice.ok("friend_request", ["user": "bob"])
        try bob.ok("friend_accept", ["user": "alice"])
        let room = "chat:alice~bob"
        try alice.subscribe(room)
        return (alice, bob, room)
    }

    /// One node where Alice published "kept" (the log's top then: `keptUpTo`) and "lost" (the
    /// node's position after it: `position`), the reply to "lost" in `lost`.
    private struct Published {
        var cluster: ClusterHarness
        var alice: ProtocolClient
        var room: String
        var keptUpTo: UInt64
        var position: Double
        var lost: JSONObject
    }

    private static func keptAndLost() async throws -> Published {
        let cluster = try await ClusterHarness(nodes: 1)
        let (alice, _, room) = try await friends(port: cluster.port(0), cluster)
        let kept = try alice.publish(room, ["text": "kept"])
        let keptUpTo = try logTop(cluster)
        let lost = try alice.publish(room, ["text": "lost"])
        #expect(JSON.int(lost["offset"]) == JSON.int(kept["offset"]).map { $0 + 1 })
        let position = try #require(try cluster.metrics(0).value("huddle_cluster_log_position"))
        return Published(cluster: cluster, alice: alice, room: room, keptUpTo: keptUpTo, position: position, lost: lost)
    }

    /// The position of the log's newest entry, asked of Redis.
    private static func logTop(_ cluster: ClusterHarness) throws -> UInt64 {
        guard let reply = RedisProbe.command(port: cluster.redis.port, ["XREVRANGE", "huddle:log", "+", "-", "COUNT", "1"]),
              let top = reply.split(separator: "\n").first.flatMap({ UInt64($0.split(separator: "-")[0]) })
        else { throw TestFailure("redis did not answer XREVRANGE") }
        return top
    }

    /// The log as a promoted replica that never had the entries after `keptUpTo` holds it
    /// (stream rebuilt, so its last ID is `keptUpTo`), plus, with `replacedBy`, one entry with
    /// no commands at `keptUpTo + 1` by that writer (another node's append there).
    private static func loseEntries(after keptUpTo: UInt64, replacedBy writer: String? = nil, _ cluster: ClusterHarness) throws {
        // `d` is the SHA-256 of the empty `c`, as bytes.
        let script = """
            local kept = redis.call('XRANGE', KEYS[1], '-', ARGV[1] .. '-0')
            local all = redis.call('XLEN', KEYS[1])
            redis.call('DEL', KEYS[1])
            for _, entry in ipairs(kept) do redis.call('XADD', KEYS[1], entry[1], unpack(entry[2])) end
            if ARGV[2] ~= '' then
              local digest = ARGV[3]:gsub('..', function(pair) return string.char(tonumber(pair, 16)) end)
              redis.call('XADD', KEYS[1], (tonumber(ARGV[1]) + 1) .. '-0', 'w', ARGV[2], 't', '1', 'c', '', 'd', digest)
            end
            return all - #kept
            """
        let reply = RedisProbe.command(port: cluster.redis.port, ["EVAL", script, "1", "huddle:log", "\(keptUpTo)", writer ?? "", emptyDigest])
        guard let removed = reply.flatMap(Int.init), removed > 0 else { throw TestFailure("no entry lost: \(reply ?? "no answer")") }
    }

    /// One entry with no commands by `intruder/0` at `position`, whatever the stream's top: a
    /// bare XADD, as the first version appended.
    private static func xadd(at position: UInt64, _ cluster: ClusterHarness) throws {
        let script = """
            local digest = ARGV[2]:gsub('..', function(pair) return string.char(tonumber(pair, 16)) end)
            return redis.call('XADD', KEYS[1], ARGV[1] .. '-0', 'w', 'intruder/0', 't', '1', 'c', '', 'd', digest)
            """
        let reply = RedisProbe.command(port: cluster.redis.port, ["EVAL", script, "1", "huddle:log", "\(position)", emptyDigest])
        guard reply == "\(position)-0" else { throw TestFailure("XADD at \(position): \(reply ?? "no answer")") }
    }

    /// The SHA-256 of nothing: `d` of an entry whose `c` is empty.
    private static let emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    private static func history(_ client: ProtocolClient, _ room: String) throws -> [JSONObject] {
        (try client.ok("history", ["channel": room, "limit": 100])["publications"] as? [JSONObject]) ?? []
    }

    private static func texts(_ publications: [JSONObject]) -> [String] {
        publications.compactMap { ($0["data"] as? JSONObject)?["text"] as? String }
    }

    /// The log's top falls below the node's position: the node finds it (its lease renewal
    /// reads the top each second, its next append is refused with the top), rebuilds from the
    /// log, and serves only what the log holds; the lost message's offset is taken again.
    @Test func aNodeAheadOfTheLogRebuildsWithoutTheLostEntries() async throws {
        let published = try await Self.keptAndLost()
        let (cluster, alice, room, lost) = (published.cluster, published.alice, published.room, published.lost)

        try Self.loseEntries(after: published.keptUpTo, cluster)
        try await cluster.untilHolds("the node rebuilt its state from the log") {
            try cluster.server(0).logText.contains("rebuilt from the shared snapshot")
        }
        let log = try cluster.server(0).logText
        #expect(log.contains("the shared log lost entries this node applied"), "\(log)")
        #expect(try cluster.metrics(0).value("huddle_cluster_lost_entry_rebuilds_total") == 1)
        let rebuilt = try Self.history(alice, room)
        #expect(Self.texts(rebuilt) == ["kept"], "\(rebuilt)\n\(log)")

        // Writes go on from the log's top: the next message takes the lost one's offset.
        try await cluster.untilHolds("the node takes writes again") { JSON.bool(try alice.request("publish", ["channel": room, "data": ["text": "after"]])["ok"]) == true }
        #expect(JSON.int(try Self.history(alice, room).first?["offset"]) == JSON.int(lost["offset"]))
        #expect(Self.texts(try Self.history(alice, room)) == ["after", "kept"])
    }

    /// The lost entry's position was taken by another writer: the position matches, the entry
    /// does not. The node's next append names the entry it built on and is refused (its write
    /// answered `unavailable`, never acknowledged); it rebuilds and the retried write lands on
    /// the log's state.
    @Test func anAppendOnAReplacedEntryIsRefusedAndTheNodeRebuilds() async throws {
        let published = try await Self.keptAndLost()
        let (cluster, alice, room, keptUpTo, position) = (published.cluster, published.alice, published.room, published.keptUpTo, published.position)

        try Self.loseEntries(after: keptUpTo, replacedBy: "intruder/0", cluster)
        let refused = try alice.request("publish", ["channel": room, "data": ["text": "on the lost one"]])
        if position == Double(keptUpTo + 1) {
            // Same position as the log's top: only the entry's identity tells them apart.
            #expect((refused["error"] as? JSONObject)?["code"] as? String == "unavailable", "\(refused)")
        }
        try await cluster.untilHolds("the node rebuilt its state from the log") {
            try cluster.server(0).logText.contains("rebuilt from the shared snapshot")
        }
        #expect(try cluster.metrics(0).value("huddle_cluster_lost_entry_rebuilds_total") == 1)
        try await cluster.untilHolds("the node takes writes again") { JSON.bool(try alice.request("publish", ["channel": room, "data": ["text": "retried"]])["ok"]) == true }
        #expect(Self.texts(try Self.history(alice, room)) == ["retried", "kept"])
    }

    /// A node that does not write meets the replacing entry only through its reader: the next
    /// entry names the one it was appended on, which is not the one this node applied.
    @Test func aReaderMeetingAnEntryAppendedOnAnotherOneRebuilds() async throws {
        let published = try await Self.keptAndLost()
        let (cluster, alice, room, keptUpTo, position) = (published.cluster, published.alice, published.room, published.keptUpTo, published.position)
        try #require(position == Double(keptUpTo + 1), "one entry for the lost message")

        try Self.loseEntries(after: keptUpTo, replacedBy: "intruder/0", cluster)
        // A node joining now reads the log as it is, and writes on its top.
        let joined = try await cluster.addNode()
        try ProtocolClient.signedUp("carol", port: cluster.port(joined))
        try await cluster.untilHolds("node 1's write landed") { try cluster.metrics(joined).value("huddle_cluster_log_position") ?? 0 > position }

        try await cluster.untilHolds("node 0 rebuilt its state from the log") {
            try cluster.server(0).logText.contains("rebuilt from the shared snapshot")
        }
        #expect(try cluster.server(0).logText.contains("is not the one it applied"))
        #expect(Self.texts(try Self.history(alice, room)) == ["kept"])
        try await cluster.untilHolds("node 0 applied node 1's write") {
            try cluster.metrics(0).value("huddle_cluster_log_position") == cluster.metrics(joined).value("huddle_cluster_log_position")
        }
        try await cluster.untilHolds("carol is known on node 0") {
            JSON.bool(try alice.request("friend_request", ["user": "carol"])["ok"]) == true
        }
    }

    /// A gap is not a trim: entries above position + 1 while the log's first entry is at or
    /// below it. The node does not apply around it, nor reload as if trimmed (it used to, and
    /// found no snapshot): it says so and stops (exit 70) for the operator.
    @Test func aGapThatIsNotATrimStopsTheNode() async throws {
        let cluster = try await ClusterHarness(nodes: 1)
        let (alice, _, room) = try await Self.friends(port: cluster.port(0), cluster)
        try alice.publish(room, ["text": "before the gap"])
        let top = try Self.logTop(cluster)

        try Self.xadd(at: top + 2, cluster)
        try await cluster.untilHolds("the node stopped") { cluster.exited(0) != nil }
        let (status, log) = try #require(cluster.exited(0))
        #expect(status == 70)
        #expect(log.contains("the shared log has a gap that is not a trim"), "\(log)")
        #expect(!log.contains("trimmed past"), "\(log)")
    }
}
