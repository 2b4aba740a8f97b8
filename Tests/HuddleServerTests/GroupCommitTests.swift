import ChildProcessExit
import Foundation
import Testing

/// Issue 15: under `--fsync always` the log's fdatasync runs on a thread of its own while the
/// core goes on applying the next turns, and each turn's replies and events go out only once
/// its batch is durable, in order. The server's syncs are held and let through one at a time by
/// the store's test gate (`HUDDLE_TEST_SYNC_GATE`, a FIFO): no timing anywhere.
@Suite(.ownThread) struct GroupCommitTests {
    @Test func theCoreAppliesTheNextBatchWhileASyncRunsAndReleasesEachBatchOnlyOnceDurableInOrder() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let gate = try SyncGate(nextTo: data)
        let server = try await DurableServer.start(["--fsync", "always"], dataDirectory: data, environment: gate.environment)

        // With the gate open: two writers and a reader of room:gc.
        let first = try ProtocolClient(port: server.port)
        try first.signup("gc_first")
        let second = try ProtocolClient(port: server.port)
        try second.signup("gc_second")
        let reader = try ProtocolClient(port: server.port)
        try reader.signup("gc_reader")
        try reader.subscribe("room:gc")

        // Held: the first publish is in the log, its sync waits at the gate.
        try gate.hold()
        let firstID = try first.sendRequest("publish", ["channel": "room:gc", "data": ["n": 1]])
        try await server.waitForLogCount(SyncGate.heldLine, atLeast: 1)
        let before = try Self.recordCount(data)

        // Meanwhile the core takes the second writer's publish and appends it: the next batch.
        let secondID = try second.sendRequest("publish", ["channel": "room:gc", "data": ["n": 2]])
        try await Self.waitUntil("the second publish is appended while the first sync is held") { try Self.recordCount(data) == before + 1 }

        // The first sync through: its reply and its event, and the second batch's sync is held.
        try gate.step()
        let firstReply = try first.reply(to: firstID)
        #expect(firstReply["ok"] as? Bool == true, "\(firstReply)")
        #expect((firstReply["result"] as? [String: Any])?["offset"] as? Int == 1)
        let one = try reader.nextEvent("publication")
        #expect(one["offset"] as? Int == 1)
        try await server.waitForLogCount(SyncGate.heldLine, atLeast: 2)

        // A request the reader's own loop answers (an unknown op) is not held: it arrives before
        // the second publication, which waits for its sync…
        try reader.sendText(#"{"id":"probe","op":"no_such_op"}"#)
        let probe = try reader.readMessage()
        #expect(probe["id"] as? String == "probe", "the second batch went out before its sync: \(probe)")
        #expect((probe["error"] as? [String: Any])?["code"] as? String == "unknown_op")

        // …and goes out once it is through.
        try gate.release()
        let two = try reader.nextEvent("publication")
        #expect(two["offset"] as? Int == 2)
        let secondReply = try second.reply(to: secondID)
        #expect((secondReply["result"] as? [String: Any])?["offset"] as? Int == 2, "\(secondReply)")

        // Both are where a restart finds them.
        server.kill9()
        let again = try await DurableServer.start(["--fsync", "always"], dataDirectory: data)
        let check = try V1Client(port: again.port)
        try check.signUp("gc_check")
        let history = try check.fullHistory("room:gc")
        #expect(history.publications.map { ($0["data"] as? [String: Any])?["n"] as? Int } == [1, 2])
        try await again.stop()
    }

    /// Records in every segment of the data directory.
    static func recordCount(_ data: URL) throws -> Int {
        try DataFiles.segments(data).reduce(0) { $0 + (try DataFiles.records(in: $1).count) }
    }

    /// Waits for a condition that the server brings about (an event, not a duration).
    static func waitUntil(_ what: String, timeout: Double = 20, _ condition: () throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try !condition() {
            guard Date() < deadline else { throw TestFailure("never happened: \(what)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
