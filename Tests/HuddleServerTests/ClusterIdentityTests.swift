import ChildProcessExit
import Foundation
import JWTTestSupport
import Testing

/// protocol.md "Identities" across the nodes of a cluster: what one node decided (the account an
/// identity made, its links, its spent nonce) holds on the others, which apply the same commands.
@Suite(.ownThread) struct ClusterIdentityTests {
    @Test func anIdentityMadeOnOneNodeSignsInOnAnotherAndItsNonceStaysSpent() async throws {
        let idp = try JWKSServer(issuer: "https://idp.test", keys: [ProtocolIdentityTests.rsa, ProtocolIdentityTests.ec])
        defer { idp.stop() }
        let cluster = try await ClusterHarness(nodes: 2, arguments: ["--oidc-issuer", idp.flag(audience: ProtocolIdentityTests.audience)])
        let claims = { (subject: String, nonce: String?) in ProtocolIdentityTests.claims(issuer: idp.issuer, subject: subject, nonce: nonce) }
        let used = ProtocolIdentityTests.rsa.sign(claims("c-1", "cluster-nonce"))
        _ = try ProtocolClient(port: cluster.port(0)).ok("identity_signin", ["token": used, "nonce": "cluster-nonce", "username": "cora"])
        // Node 1 has applied node 0's turn once it finds the account.
        let (watcher, _) = try ProtocolClient.signedUp("watcher", port: cluster.port(1))
        try await cluster.untilHolds("node 1 knows cora") {
            (try watcher.ok("user_search", ["prefix": "cora"])["users"] as? [String]) == ["cora"]
        }
        #expect(try ProtocolClient(port: cluster.port(1)).errorCode("identity_signin", ["token": used, "nonce": "cluster-nonce"]) == "nonce_reused")
        let cora = try ProtocolClient(port: cluster.port(1))
        let signedIn = try cora.ok("identity_signin", ["token": ProtocolIdentityTests.ec.sign(claims("c-1", nil))])
        #expect((signedIn["user"] as? JSONObject)?["username"] as? String == "cora")
        _ = try cora.ok("identity_link", ["token": ProtocolIdentityTests.rsa.sign(claims("c-2", nil))])
        let onNodeZero = try ProtocolClient(port: cluster.port(0))
        _ = try onNodeZero.ok("auth", ["token": try #require(signedIn["token"] as? String)])
        try await cluster.untilHolds("node 0 has cora's link") {
            (try onNodeZero.ok("identities")["identities"] as? [JSONObject])?.count == 2
        }
    }
}
