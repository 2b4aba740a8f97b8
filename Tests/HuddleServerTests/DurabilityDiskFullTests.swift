import ChildProcessExit
import Foundation
import Testing

/// Issue 4: a disk that refuses writes, simulated with a file-size limit (`ulimit -f`; the
/// server ignores SIGXFSZ, so a write past the limit fails with EFBIG). chmod cannot do it: the
/// tests run as root.
@Suite(.ownThread) struct DurabilityDiskFullTests {
    @Test func fullDiskRefusesWritesServesReadsAndLosesNothingAcknowledged() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        // 64 blocks of 512 bytes (dash): no file of the server may grow past 32 KiB.
        let server = try await DurableServer.start(dataDirectory: data, fileSizeBlocks: 64)
        let writer = try V1Client(port: server.port)
        let token = try writer.signUp("full_writer")
        let reader = try V1Client(port: server.port)
        try reader.signUp("full_reader")
        try reader.ok("subscribe", ["channel": "room:full"])

        var acknowledged: [[String: Any]] = []
        var refusal: [String: Any]?
        var epoch = ""
        for n in 1...400 {
            let data: [String: Any] = ["n": n, "text": String(repeating: "full disk ", count: 60)]
            let reply = try writer.request("publish", ["channel": "room:full", "data": data])
            if reply["ok"] as? Bool == true {
                let result = reply["result"] as? [String: Any] ?? [:]
                #expect(result["offset"] as? Int == n)
                epoch = result["epoch"] as? String ?? ""
                acknowledged.append(data)
                continue
            }
            let error = reply["error"] as? [String: Any] ?? [:]
            if error["code"] as? String == "rate_limited" {
                try await Task.sleep(for: .milliseconds(error["retry_after_ms"] as? Int ?? 100))
                continue
            }
            refusal = error
            break
        }
        let refused = try #require(refusal, "400 publishes of 600 bytes fit in a 32 KiB log?")
        #expect(refused["code"] as? String == "unavailable", "\(refused)")
        #expect(acknowledged.count > 10, "\(acknowledged.count) acknowledged before the disk filled")
        try await server.waitForLog("storage refuses writes")
        // From now on writes are refused at once…
        let again = try writer.request("publish", ["channel": "room:full", "data": ["late": true]])
        #expect((again["error"] as? [String: Any])?["code"] as? String == "unavailable", "\(again)")

        // …and reads go on: live events of every acknowledged publish (and of nothing else),
        // history, a new connection's auth + subscribe with recovery, presence.
        for n in 1...acknowledged.count {
            let event = try reader.nextEvent()
            #expect(event["event"] as? String == "publication" && event["offset"] as? Int == n, "\(event)")
        }
        let history = try writer.fullHistory("room:full")
        #expect(history.offset == acknowledged.count)
        #expect(history.publications.count == acknowledged.count)
        for (publication, sent) in zip(history.publications, acknowledged) {
            #expect(jsonEqual(publication["data"], sent))
        }
        let late = try V1Client(port: server.port)
        try late.ok("auth", ["token": token])
        let subscribed = try late.ok("subscribe", ["channel": "room:full", "since": ["epoch": "", "offset": 0]])
        #expect(subscribed["recovered"] as? Bool == true, "\(subscribed)")
        #expect((subscribed["publications"] as? [Any])?.count == acknowledged.count)
        #expect(subscribed["epoch"] as? String == epoch)
        let presence = try late.ok("presence", ["channel": "room:full"])
        #expect(presence["users"] as? [String] == ["full_reader", "full_writer"], "\(presence)")
        let signup = try V1Client(port: server.port).request(
            "signup", ["username": "too_late", "email": "too_late@example.com", "password": "pw-too-late-secret"])
        #expect((signup["error"] as? [String: Any])?["code"] as? String == "unavailable", "\(signup)")

        let stopStatus = try await server.stop()
        #expect(stopStatus == 0, "\(server.logText)")
        print("full disk: \(acknowledged.count) publishes acknowledged before EFBIG; shutdown: \(server.logText.split(separator: "\n").filter { $0.contains("snapshot") })")

        // Without the limit: every acknowledged write, nothing refused, and writes work again.
        let restarted = try await DurableServer.start(dataDirectory: data)
        let client = try V1Client(port: restarted.port)
        try client.ok("auth", ["token": token])
        let after = try client.fullHistory("room:full")
        #expect(after.offset == acknowledged.count && after.epoch == epoch)
        for (publication, sent) in zip(after.publications, acknowledged) {
            #expect(jsonEqual(publication["data"], sent))
        }
        #expect(try client.ok("publish", ["channel": "room:full", "data": ["back": true]])["offset"] as? Int == acknowledged.count + 1)
        #expect(try await restarted.stop() == 0)
        let verify = try await DurableServer.dataCommand("verify", dataDirectory: data)
        #expect(verify.status == 0, "\(verify.output)")
    }
}

/// Issue 12: every failed snapshot started a new log segment and nothing trimmed them (20 in
/// 45 s on a nearly full disk). A directory where the snapshot's leftover temporary file would
/// be makes every snapshot fail (its removal fails with EISDIR) while the log still writes.
@Suite(.ownThread) struct DurabilityFailingSnapshotTests {
    @Test func failedSnapshotsDoNotPileUpLogSegments() async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let blocker = data.appendingPathComponent("snapshot-0000000000000001.snap.tmp")
        try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: true)
        let server = try await DurableServer.start(["--snapshot-interval", "1"], dataDirectory: data)
        let writer = try V1Client(port: server.port)
        let token = try writer.signUp("snap_failer")
        for n in 1...5 {
            try writer.ok("publish", ["channel": "room:failing", "data": ["n": n]])
            try await server.waitForLogCount("snapshot failed", atLeast: n)
        }
        let segments = try DataFiles.segments(data)
        #expect(segments.count <= 2, "5 failed snapshots left \(segments.map(\.lastPathComponent))")

        // Once snapshots work again the log behind them is trimmed as usual.
        try FileManager.default.removeItem(at: blocker)
        try writer.ok("publish", ["channel": "room:failing", "data": ["n": 6]])
        try await server.waitForLog("snapshot written")
        #expect(try await server.stop() == 0)
        let restarted = try await DurableServer.start(dataDirectory: data)
        let reader = try V1Client(port: restarted.port)
        try reader.ok("auth", ["token": token])
        #expect(try reader.fullHistory("room:failing").publications.count == 6)
        #expect(try await restarted.stop() == 0)
    }
}
