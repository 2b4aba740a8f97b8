import ChildProcessExit
import Foundation
import Testing

/// Issue 14, acceptance 2: a node dies. Clients on three nodes chat in one room; one node is
/// killed with SIGKILL while its client has publishes in flight. That client reconnects to
/// another node, resumes from the last publication it saw and sends again, with the same
/// `client_id`, what was left unanswered. In the end every acknowledged write is in the room
/// exactly once, at the offset its reply named, offsets are contiguous, and every client saw
/// every publication once, in order — the surviving nodes' clients without a break.
@Suite(.ownThread) struct ClusterNodeDeathTests {
    static let room = "room:lobby"

    /// One user writing and reading the room, and what it sent, was told, and was delivered.
    final class Participant {
        let name: String
        let index: Int
        let token: String
        var client: ProtocolClient
        /// The message numbers sent, and the offset each acknowledged one was given.
        var sent: Set<Int> = []
        var acked: [Int: Int] = [:]
        /// Offsets of the room's publications delivered to this user, live or recovered, in order.
        var delivered: [Int] = []
        var epoch = ""

        init(index: Int, client: ProtocolClient, token: String) throws {
            self.index = index
            name = "writer\(index)"
            self.client = client
            self.token = token
            try client.subscribe(ClusterNodeDeathTests.room)
        }

        /// Writer `index`, signed up on the first node (signing up across nodes is
        /// ClusterFeatureTests' concern), connected to node `index`.
        static func joining(_ cluster: ClusterHarness, index: Int) async throws -> Participant {
            let (signup, token) = try ProtocolClient.signedUp("writer\(index)", port: cluster.port(0))
            let client = index == 0 ? signup : try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(index))
            return try Participant(index: index, client: client, token: token)
        }

        func fields(_ n: Int) -> JSONObject {
            ["channel": ClusterNodeDeathTests.room, "data": ["w": index, "n": n], "client_id": "\(name)-\(n)"]
        }

        func record(_ n: Int, reply: JSONObject) throws {
            guard JSON.bool(reply["ok"]) == true, let offset = JSON.int((reply["result"] as? JSONObject)?["offset"]) else {
                throw TestFailure("\(name) publish \(n) failed: \(JSON.text(reply))")
            }
            if let earlier = acked[n], earlier != offset { throw TestFailure("\(name) message \(n) acknowledged at \(earlier), then at \(offset)") }
            acked[n] = offset
        }

        func publish(_ n: Int) throws {
            sent.insert(n)
            try record(n, reply: try client.request("publish", fields(n)))
        }

        /// A live `publication` event: counted when it is the room's.
        func deliver(_ event: JSONObject) {
            guard event["channel"] as? String == ClusterNodeDeathTests.room else { return }
            deliverRecovered(event)
        }

        /// A publication of the room's, as a `subscribe` result lists it (no `channel` member).
        func deliverRecovered(_ publication: JSONObject) {
            guard let offset = JSON.int(publication["offset"]) else { return }
            delivered.append(offset)
            epoch = publication["epoch"] as? String ?? epoch
        }

        /// Reads the room's publications until offset `top` was delivered.
        func collect(through top: Int) throws {
            while delivered.last ?? 0 < top { deliver(try client.nextPublication(on: ClusterNodeDeathTests.room, timeout: 30)) }
        }
    }

    @Test func clientsOfAKilledNodeResumeOnAnotherAndNothingIsLostOrDoubled() async throws {
        let cluster = try await ClusterHarness()
        var participants: [Participant] = []
        for index in cluster.indices { participants.append(try await Participant.joining(cluster, index: index)) }
        let victim = participants[1]

        // Everyone chats, from every node in turn.
        for n in 1...10 {
            for participant in participants { try participant.publish(n) }
        }

        // Node 2 dies with a burst of its client's publishes in flight.
        let burst = Array(11...30)
        let ids = try victim.client.sendBatch(burst.map { ("publish", victim.fields($0)) })
        victim.sent.formUnion(burst)
        cluster.kill9(node: 1)
        var answered = 0
        for (id, n) in zip(ids, burst) {
            guard let reply = try? victim.client.reply(to: id) else { break }
            try victim.record(n, reply: reply)
            answered += 1
        }
        // What the dead node delivered before it died counts: it reached the user.
        while let event = try? victim.client.eventIfAny(within: 0.05) { victim.deliver(event) }
        let inDoubt = burst.filter { victim.acked[$0] == nil }

        // The other nodes' clients go on as if nothing happened.
        for n in 11...20 {
            try participants[0].publish(n)
            try participants[2].publish(n)
        }

        // The victim moves to node 3, resumes where its deliveries stopped, and sends again
        // what was never answered, under the same client_id.
        let moved = try ProtocolClient(port: cluster.port(2), credential: .header(victim.token))
        _ = try moved.nextEvent("session", timeout: 20)
        victim.client = moved
        let last = victim.delivered.last ?? 0
        let resumed = try moved.subscribe(Self.room, since: (victim.epoch, last))
        #expect(JSON.bool(resumed["recovered"]) == true, "\(JSON.text(resumed))")
        for publication in (resumed["publications"] as? [JSONObject]) ?? [] { victim.deliverRecovered(publication) }
        for n in inDoubt { try victim.record(n, reply: try moved.request("publish", victim.fields(n))) }
        for n in 31...40 { try victim.publish(n) }

        // Every write was acknowledged by now, each once.
        let total = participants.reduce(0) { $0 + $1.sent.count }
        #expect(participants.allSatisfy { $0.acked.count == $0.sent.count })
        let top = participants.flatMap(\.acked.values).max() ?? 0
        #expect(top == total, "offsets 1…\(total) for \(total) writes, top \(top)")

        // The room read back from a surviving node: contiguous, each write once, where acked.
        let reader = participants[0].client
        try await untilHolds("node 1 has applied the whole room") { JSON.int(try reader.ok("history", ["channel": Self.room, "limit": 1])["offset"]) == top }
        let history = try Self.fullHistory(reader)
        #expect(history.map { JSON.int($0["offset"]) ?? -1 } == Array(1...max(top, 1)), "offsets contiguous")
        var seen: [String: Int] = [:]
        for publication in history {
            let data = publication["data"] as? JSONObject
            let key = "\(JSON.int(data?["w"]) ?? -1)-\(JSON.int(data?["n"]) ?? -1)"
            #expect(seen[key] == nil, "message \(key) twice")
            seen[key] = JSON.int(publication["offset"])
        }
        for participant in participants {
            for (n, offset) in participant.acked {
                #expect(seen["\(participant.index)-\(n)"] == offset, "\(participant.name) message \(n) acknowledged at \(offset)")
            }
        }

        // Each client saw the whole room once, in order: no gap, no duplicate.
        for participant in participants {
            try participant.collect(through: top)
            #expect(participant.delivered == Array(1...top), "\(participant.name): \(participant.delivered)")
        }
        print("node death: \(total) writes, burst answered before the kill \(answered), in doubt \(inDoubt.count)")
    }

    /// Every publication of `channel`, oldest first, paging `history` 100 at a time.
    static func fullHistory(_ client: ProtocolClient, channel: String = room) throws -> [JSONObject] {
        var before: Int?
        var pages: [[JSONObject]] = []
        repeat {
            var arguments: JSONObject = ["channel": channel, "limit": 100]
            if let before { arguments["before"] = before }
            let result = try client.ok("history", arguments)
            pages.append(result["publications"] as? [JSONObject] ?? [])
            before = JSON.int(result["next_before"])
        } while before != nil
        return pages.flatMap { $0 }.reversed()
    }
}
