import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// Issue 16's moderation across nodes, on one real `redis-server` (ClusterHarness): a
/// suspension asked of one node closes the user's connections on every node with 4003 and is
/// refused there at sign-in; a report filed on one node is in every node's list; a block made on
/// one node is enforced on another.
@Suite(.ownThread) struct ClusterModerationTests {
    static let key = "test-api-key-0123456789"

    @Test func aSuspensionClosesTheUserEverywhereAndReportsAndBlocksAreEveryNodes() async throws {
        let cluster = try await ClusterHarness(nodes: 2, arguments: ["--api-key", Self.key])
        let (alice, token) = try ProtocolClient.signedUp("alice", port: cluster.port(0))
        let elsewhere = try await ProtocolClient.authenticatedOnceKnown(token, port: cluster.port(1))
        let (bob, _) = try ProtocolClient.signedUp("bob", port: cluster.port(1))

        // A block on node 2, enforced on node 1 once applied there. First node 1 knows bob, or
        // "hidden" below would hold before his signup got there, and the report fail.
        try await cluster.untilHolds("node 1 knows bob") {
            try alice.ok("user_search", ["prefix": "b"])["users"] as? [String] == ["bob"]
        }
        try bob.ok("block", ["user": "alice"])
        try await cluster.untilHolds("node 1 hides bob from alice") {
            try alice.ok("user_search", ["prefix": "b"])["users"] as? [String] == []
        }
        #expect(try alice.errorCode("friend_request", ["user": "bob"]) == "user_not_found")

        // A report filed on node 1, listed by node 2.
        #expect(JSON.int(try alice.ok("report", ["kind": "user", "user": "bob", "reason": "spam"])["report"]) == 1)
        try await cluster.untilHolds("node 2 lists the report") {
            let listed = try HTTPExchange(port: cluster.port(1), "GET", "/api/v1/reports", key: Self.key)
            return ((listed.json?["reports"] as? [JSONObject]) ?? []).compactMap { $0["reporter"] as? String } == ["alice"]
        }

        // Suspended through node 2: both connections close, on both nodes.
        let suspended = try HTTPExchange(port: cluster.port(1), "POST", "/api/v1/users/alice/suspend", body: #"{"reason": "spam"}"#, key: Self.key)
        #expect(suspended.status == 200, "\(suspended.body)")
        let code = WebSocketCloseCode(rawValue: 4003)
        #expect((try? alice.closeCode(timeout: 20)) == code, "node 1")
        #expect((try? elsewhere.closeCode(timeout: 20)) == code, "node 2")
        for node in cluster.indices {
            let refusal = try ProtocolClient(port: cluster.port(node)).errorCode("auth", ["token": token])
            #expect(refusal == "account_suspended", "node \(node + 1)")
        }
    }
}
