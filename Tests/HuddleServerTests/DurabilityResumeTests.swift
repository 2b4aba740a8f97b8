import ChildProcessExit
import Foundation
import Testing

/// Issue 4: a subscriber's saved {epoch, offset} stays good across a restart — graceful or
/// SIGKILL: `subscribe` with `since` recovers exactly the missed publications, then live events
/// continue with no gap.
@Suite(.ownThread) struct DurabilityResumeTests {
    static func message(_ n: Int) -> [String: Any] { ["n": n, "text": "resume \(n)"] }

    @Test(arguments: ["graceful", "kill"])
    func subscriberResumesAcrossARestart(restart: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await DurableServer.start(dataDirectory: data)
        let publisher = try V1Client(port: server.port)
        try publisher.signUp("resume_pub")
        var subscriber: V1Client? = try V1Client(port: server.port)
        try subscriber!.signUp("resume_sub")
        try subscriber!.ok("subscribe", ["channel": "room:resume"])
        for n in 1...5 { try publisher.ok("publish", ["channel": "room:resume", "data": Self.message(n)]) }
        var saved = (epoch: "", offset: 0)
        for n in 1...5 {
            let event = try subscriber!.nextEvent()
            #expect(event["offset"] as? Int == n)
            saved = (event["epoch"] as? String ?? "", event["offset"] as? Int ?? 0)
        }
        subscriber = nil  // the phone goes away
        for n in 6...8 { try publisher.ok("publish", ["channel": "room:resume", "data": Self.message(n)]) }
        if restart == "graceful" {
            #expect(try await server.stop() == 0)
        } else {
            server.kill9()
        }

        let restarted = try await DurableServer.start(dataDirectory: data)
        let publisher2 = try V1Client(port: restarted.port)
        try publisher2.logIn("resume_pub")
        for n in 9...10 { try publisher2.ok("publish", ["channel": "room:resume", "data": Self.message(n)]) }
        let back = try V1Client(port: restarted.port)
        try back.logIn("resume_sub")
        let result = try back.ok("subscribe", ["channel": "room:resume", "since": ["epoch": saved.epoch, "offset": saved.offset]])
        #expect(result["recovered"] as? Bool == true, "\(result)")
        #expect(result["epoch"] as? String == saved.epoch, "the epoch survives a \(restart) restart")
        #expect(result["offset"] as? Int == 10)
        let missed = result["publications"] as? [[String: Any]] ?? []
        #expect(missed.map { $0["offset"] as? Int ?? 0 } == [6, 7, 8, 9, 10])
        for publication in missed {
            let n = publication["offset"] as? Int ?? 0
            #expect(jsonEqual(publication["data"], Self.message(n)))
            #expect(publication["from"] as? String == "resume_pub")
        }
        // Live events continue right after the recovered ones.
        try publisher2.ok("publish", ["channel": "room:resume", "data": Self.message(11)])
        let live = try back.nextEvent()
        #expect(live["event"] as? String == "publication" && live["offset"] as? Int == 11 && live["epoch"] as? String == saved.epoch, "\(live)")
        #expect(try await restarted.stop() == 0)
    }
}
