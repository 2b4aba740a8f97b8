import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// protocol.md "Sessions", over real sockets against the real binary: a user's sessions listed
/// with their device, current one and last seen; one revoked by its id (its connections closed
/// with 4001, its token dead), the refusals; and a revoked session staying revoked across a
/// graceful restart and a kill -9.
@Suite(.ownThread) struct ProtocolSessionsTests {
    /// A new connection logged in as `name` with a device label, and its token.
    private func logIn(_ name: String, device: String, port: Int) throws -> (ProtocolClient, String) {
        let client = try ProtocolClient(port: port)
        let result = try client.ok("login", ["login": name, "password": ProtocolClient.password, "device": device])
        return (client, try #require(result["token"] as? String))
    }

    private func sessions(_ client: ProtocolClient) throws -> (list: [JSONObject], total: Int?) {
        let result = try client.ok("sessions")
        return (try #require(result["sessions"] as? [JSONObject]), JSON.int(result["total"]))
    }

    @Test func listRevokeAndTheRefusals() async throws {
        let server = try await startHuddle()
        let (phone, phoneToken) = try ProtocolClient.signedUp("alice", port: server.port)
        let (tablet, tabletToken) = try logIn("alice", device: "iPad", port: server.port)
        let (bob, _) = try ProtocolClient.signedUp("bob", port: server.port)

        let (listed, total) = try sessions(phone)
        #expect(total == 2 && listed.count == 2)
        let mine = try #require(listed.first { JSON.bool($0["current"]) == true })
        let other = try #require(listed.first { JSON.bool($0["current"]) == false })
        #expect(JSON.isNull(mine["device"]) && other["device"] as? String == "iPad")
        #expect(JSON.bool(mine["connected"]) == true && JSON.bool(other["connected"]) == true)
        let tabletID = try #require(other["id"] as? String)
        #expect(tabletID.count == 16 && tabletID != tabletToken && !tabletToken.contains(tabletID))
        #expect(try #require(JSON.int(mine["last_seen_at"])) >= (try #require(JSON.int(mine["created_at"]))))

        // Nobody else's session, and nothing that is not an id, can be revoked.
        #expect(try bob.errorCode("session_revoke", ["session": tabletID]) == "session_not_found")
        #expect(try phone.errorCode("session_revoke", ["session": "0000000000000000"]) == "session_not_found")
        #expect(try phone.errorCode("session_revoke", ["session": tabletToken]) == "session_not_found")
        #expect(try phone.errorCode("session_revoke", [:]) == "bad_request")
        #expect(try ProtocolClient(port: server.port).errorCode("sessions") == "not_authenticated")

        // Revoked by id (in any case): the tablet's connection closes with 4001, its token is dead.
        #expect(JSON.int(try phone.ok("session_revoke", ["session": tabletID.uppercased()])["revoked"]) == 1)
        #expect(try tablet.closeCode() == WebSocketCloseCode(rawValue: 4001))
        #expect(try ProtocolClient(port: server.port).errorCode("auth", ["token": tabletToken]) == "invalid_token")
        #expect(try phone.errorCode("session_revoke", ["session": tabletID]) == "session_not_found")
        #expect(try sessions(phone).total == 1)

        // Last seen moves with a sign-in of the same session on another connection.
        let before = try #require(JSON.int(try sessions(phone).list[0]["last_seen_at"]))
        let again = try ProtocolClient.authenticated(phoneToken, port: server.port)
        #expect(try #require(JSON.int(try sessions(again).list[0]["last_seen_at"])) >= before)

        // Revoking the current session closes the caller too.
        let current = try #require(try sessions(again).list[0]["id"] as? String)
        #expect(JSON.int(try again.ok("session_revoke", ["session": current])["revoked"]) == 1)
        #expect(try again.closeCode() == WebSocketCloseCode(rawValue: 4001))
        #expect(try phone.closeCode() == WebSocketCloseCode(rawValue: 4001))
    }

    @Test func aRevokedSessionStaysRevokedAcrossARestartAndAKill() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        var phoneToken = ""
        var tabletToken = ""
        var laptopToken = ""
        do {
            let server = try await startHuddle(dataDirectory: data)
            let (phone, token) = try ProtocolClient.signedUp("alice", port: server.port)
            phoneToken = token
            (_, tabletToken) = try logIn("alice", device: "iPad", port: server.port)
            (_, laptopToken) = try logIn("alice", device: "laptop", port: server.port)
            let tablet = try #require(try sessions(phone).list.first { $0["device"] as? String == "iPad" }?["id"] as? String)
            try phone.ok("session_revoke", ["session": tablet])
            #expect(try await server.stop() == 0)
        }
        do {
            let server = try await startHuddle(dataDirectory: data)
            #expect(try ProtocolClient(port: server.port).errorCode("auth", ["token": tabletToken]) == "invalid_token")
            let phone = try ProtocolClient.authenticated(phoneToken, port: server.port)
            let (listed, total) = try sessions(phone)
            #expect(total == 2 && Set(listed.compactMap { $0["device"] as? String }) == ["laptop"])
            let laptop = try #require(listed.first { $0["device"] as? String == "laptop" }?["id"] as? String)
            try phone.ok("session_revoke", ["session": laptop])
            try await server.kill9()
        }
        let server = try await startHuddle(dataDirectory: data)
        #expect(try ProtocolClient(port: server.port).errorCode("auth", ["token": laptopToken]) == "invalid_token")
        #expect(try ProtocolClient(port: server.port).errorCode("auth", ["token": tabletToken]) == "invalid_token")
        let phone = try ProtocolClient.authenticated(phoneToken, port: server.port)
        #expect(try sessions(phone).total == 1)
    }
}
