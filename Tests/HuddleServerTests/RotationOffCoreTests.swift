import ChildProcessExit
import Foundation
import Testing

/// Issues 15/16: a log rotation (here the one a snapshot starts with, after an account deletion)
/// syncs the closing segment on the sync thread, not the core's: with that thread held at the
/// test gate (`HUDDLE_TEST_SYNC_GATE`), the snapshot still starts and the core goes on applying,
/// and nothing waiting for the held sync goes out before the gate opens. No timing anywhere.
@Suite(.ownThread) struct RotationOffCoreTests {
    @Test func aSnapshotsRotationWaitsForTheSyncThreadAndReleasesNothingBeforeItIsDurable() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let gate = try SyncGate(nextTo: data)
        let server = try await DurableServer.start(["--fsync", "always"], dataDirectory: data, environment: gate.environment)

        let writer = try ProtocolClient(port: server.port)
        try writer.signup("rot_writer")
        let later = try ProtocolClient(port: server.port)
        try later.signup("rot_later")
        let reader = try ProtocolClient(port: server.port)
        try reader.signup("rot_reader")
        try reader.subscribe("room:rot")
        let leaving = try ProtocolClient(port: server.port)
        try leaving.signup("rot_leaving")

        // Held: the publish is in the log, its sync waits at the gate.
        try gate.hold()
        let firstID = try writer.sendRequest("publish", ["channel": "room:rot", "data": ["n": 1]])
        try await server.waitForLogCount(SyncGate.heldLine, atLeast: 1)

        // A deletion owes a snapshot, which starts by rotating the log — while the sync is held.
        let deleteID = try leaving.sendRequest("account_delete", ["password": ProtocolClient.password])
        try await server.waitForLog("snapshot started")

        // The rotation made nothing durable behind the gate's back: the reader's own loop answers
        // a probe (an unknown op) before the publication, which still waits for its sync.
        try reader.sendText(#"{"id":"probe","op":"no_such_op"}"#)
        let probe = try reader.readMessage()
        #expect(probe["id"] as? String == "probe", "an event went out before its sync, at the rotation: \(probe)")

        // The core goes on applying while the rotation waits: the next publish gets the next offset.
        let secondID = try later.sendRequest("publish", ["channel": "room:rot", "data": ["n": 2]])

        try gate.release()
        let firstReply = try writer.reply(to: firstID)
        #expect((firstReply["result"] as? [String: Any])?["offset"] as? Int == 1, "\(firstReply)")
        let deleted = try leaving.reply(to: deleteID)
        #expect(deleted["ok"] as? Bool == true, "\(deleted)")
        let secondReply = try later.reply(to: secondID)
        #expect((secondReply["result"] as? [String: Any])?["offset"] as? Int == 2, "\(secondReply)")
        #expect(try reader.nextEvent("publication")["offset"] as? Int == 1)
        #expect(try reader.nextEvent("publication")["offset"] as? Int == 2)
        try await server.waitForLog("snapshot written")

        // Both publications, written before and after the rotation, are where a restart finds them.
        server.kill9()
        let again = try await DurableServer.start(["--fsync", "always"], dataDirectory: data)
        let check = try V1Client(port: again.port)
        try check.signUp("rot_check")
        let history = try check.fullHistory("room:rot")
        #expect(history.publications.map { ($0["data"] as? [String: Any])?["n"] as? Int } == [1, 2])
        try await again.stop()
    }
}
