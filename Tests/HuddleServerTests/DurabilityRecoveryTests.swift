import ChildProcessExit
import Foundation
import Testing

/// Issue 4: what start-up does with damaged or missing data (HuddleStore/README.md, "Recovery").
@Suite(.ownThread) struct DurabilityRecoveryTests {
    /// Signs up `user` and publishes `count` messages to `channel`, one turn (one log record)
    /// each; returns the data sent, in order.
    @discardableResult
    static func publish(_ count: Int, to channel: String, as user: String, port: Int, signUp: Bool = true, from first: Int = 1) throws -> [[String: Any]] {
        let client = try V1Client(port: port)
        if signUp { try client.signUp(user) } else { try client.logIn(user) }
        var sent: [[String: Any]] = []
        for n in first..<(first + count) {
            let data: [String: Any] = ["n": n, "text": "message \(n) from \(user) — ✓", "pad": String(repeating: "x", count: 50 + n * 13)]
            let result = try client.ok("publish", ["channel": channel, "data": data])
            #expect(result["offset"] as? Int == n)
            sent.append(data)
        }
        return sent
    }

    /// Reads `channel` whole and checks it holds exactly `expected`, at offsets 1…N.
    static func expectHistory(_ channel: String, _ expected: [[String: Any]], port: Int, user: String) throws {
        let client = try V1Client(port: port)
        try client.logIn(user)
        let history = try client.fullHistory(channel)
        #expect(history.offset == expected.count, "\(channel): latest offset \(history.offset), expected \(expected.count)")
        #expect(history.publications.map { $0["offset"] as? Int ?? -1 } == (0..<expected.count).map { $0 + 1 }, "\(channel): offsets")
        for (publication, data) in zip(history.publications, expected) {
            #expect(jsonEqual(publication["data"], data), "\(publication)")
        }
    }

    // MARK: 2. Torn last record

    /// A crash mid-write leaves the final record short: start-up cuts it, says so, and every
    /// earlier record is there. Cut 3 bytes off its payload, or everything past 10 bytes of
    /// its 16-byte header.
    @Test(arguments: ["payload", "header"])
    func tornLastRecordIsCutAndEverythingBeforeItKept(cut: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await DurableServer.start(dataDirectory: data)
        let sent = try Self.publish(10, to: "room:torn", as: "torn_writer", port: server.port)
        server.kill9()

        let segment = try #require(try DataFiles.segments(data).last)
        let records = try DataFiles.records(in: segment)
        let final = try #require(records.last)
        let segmentSize = try DataFiles.size(segment)
        #expect(final.end == segmentSize, "the last record ends the segment")
        let newSize = cut == "payload" ? final.end - 3 : final.offset + 10
        try DataFiles.truncate(segment, to: newSize)

        let verify = try await DurableServer.dataCommand("verify", dataDirectory: data)
        #expect(verify.status == 0, "a torn tail is a notice, not a problem: \(verify.output)")
        #expect(verify.output.contains("interrupted write"), "\(verify.output)")

        let restarted = try await DurableServer.start(dataDirectory: data)
        let log = restarted.logText
        #expect(log.contains("cut a torn record"), "\(log)")
        #expect(log.contains(segment.lastPathComponent), "the notice names the segment: \(log)")
        #expect(log.contains("offset=\(final.offset)"), "the notice names the record's offset \(final.offset): \(log)")
        try Self.expectHistory("room:torn", Array(sent.dropLast()), port: restarted.port, user: "torn_writer")

        // The log goes on from the cut: the next publish takes the lost record's offset.
        let client = try V1Client(port: restarted.port)
        try client.logIn("torn_writer")
        #expect(try client.ok("publish", ["channel": "room:torn", "data": ["after": true]])["offset"] as? Int == 10)
        #expect(try await restarted.stop() == 0)
        #expect(try await DurableServer.dataCommand("verify", dataDirectory: data).status == 0)
    }

    // MARK: 3. Flipped bit in a middle record

    /// Damage that is not an interrupted write — a flipped bit with valid records after it —
    /// stops the start with the file and offset, and `huddle data verify` fails naming them.
    @Test(arguments: ["payload", "length", "crc", "sequence"])
    func flippedBitInAMiddleRecordRefusesToStart(field: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let server = try await DurableServer.start(dataDirectory: data)
        try Self.publish(10, to: "room:flipped", as: "flip_writer", port: server.port)
        server.kill9()

        let segment = try #require(try DataFiles.segments(data).last)
        let records = try DataFiles.records(in: segment)
        try #require(records.count == 11)
        let victim = records[5]
        switch field {
        case "payload": try DataFiles.flipBit(in: segment, at: victim.payloadOffset + victim.length / 2, bit: 3)
        case "length": try DataFiles.flipBit(in: segment, at: victim.offset + 1, bit: 0)  // length ± 256
        case "crc": try DataFiles.flipBit(in: segment, at: victim.offset + 5, bit: 6)
        default: try DataFiles.flipBit(in: segment, at: victim.offset + 8, bit: 1)  // sequence ± 2
        }
        let sizeBefore = try DataFiles.size(segment)

        let launch = try await DurableServer.launch(dataDirectory: data)
        guard case .exited(let status, let log) = launch else {
            Issue.record("the server started on a log with a flipped bit in record \(victim.sequence) (\(field))")
            return
        }
        #expect(status != 0)
        #expect(log.contains(segment.lastPathComponent), "the refusal names the file: \(log)")
        #expect(log.contains("\(victim.offset)"), "the refusal names the offset \(victim.offset): \(log)")
        let sizeAfter = try DataFiles.size(segment)
        #expect(sizeAfter == sizeBefore, "a refused start changes nothing")

        let verify = try await DurableServer.dataCommand("verify", dataDirectory: data)
        #expect(verify.status != 0, "\(verify.output)")
        #expect(verify.output.contains(segment.lastPathComponent) && verify.output.contains("offset \(victim.offset)"), "\(verify.output)")
        print("flipped \(field) bit, record \(victim.sequence) at offset \(victim.offset):\n  server: \(log.split(separator: "\n").last ?? "")\n  verify: \(verify.output)")
    }

    // MARK: 4. Corrupt newest snapshot

    /// Two snapshots (two graceful stops), the newest damaged: start-up falls back to the older
    /// one plus the log after it, says which one it skipped, and loses nothing.
    @Test(arguments: ["payload", "header", "truncated"])
    func damagedNewestSnapshotFallsBackToTheOlderOne(damage: String) async throws {
        let data = try ServerProcess.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: data) }
        let first = try await DurableServer.start(DurableServer.patientExit, dataDirectory: data)
        let before = try Self.publish(8, to: "room:snap", as: "snap_writer", port: first.port)
        #expect(try await first.stop() == 0)
        let second = try await DurableServer.start(DurableServer.patientExit, dataDirectory: data)
        let after = try Self.publish(7, to: "room:snap", as: "snap_writer", port: second.port, signUp: false, from: 9)
        let other = try Self.publish(3, to: "room:snap-other", as: "snap_other", port: second.port)
        #expect(try await second.stop() == 0)

        let snapshots = try DataFiles.snapshots(data)
        try #require(snapshots.count == 2, "two graceful stops leave two snapshots: \(snapshots.map(\.lastPathComponent))")
        let newest = snapshots[1]
        let size = try DataFiles.size(newest)
        switch damage {
        case "payload": try DataFiles.flipBit(in: newest, at: 48 + (size - 48) / 2, bit: 5)
        case "header": try DataFiles.flipBit(in: newest, at: 20, bit: 0)  // last sequence
        default: try DataFiles.truncate(newest, to: size - 7)
        }
        let verify = try await DurableServer.dataCommand("verify", dataDirectory: data)
        #expect(verify.status == 2, "verify says start-up recovers from the older snapshot: \(verify.output)")
        #expect(verify.output.contains("recoverable"), "\(verify.output)")

        let restarted = try await DurableServer.start(DurableServer.patientExit, dataDirectory: data)
        let log = restarted.logText
        #expect(log.contains("skipped a damaged snapshot"), "\(log)")
        #expect(log.contains(newest.lastPathComponent), "the warning names the skipped file: \(log)")
        #expect(log.contains("loaded snapshot") && log.contains(snapshots[0].lastPathComponent), "\(log)")
        try Self.expectHistory("room:snap", before + after, port: restarted.port, user: "snap_writer")
        try Self.expectHistory("room:snap-other", other, port: restarted.port, user: "snap_other")
        let late = try Self.publish(3, to: "room:snap", as: "snap_writer", port: restarted.port, signUp: false, from: 16)
        #expect(try await restarted.stop() == 0)

        // Issue 12: the snapshot after a fall-back start kept the damaged one as its fallback and
        // deleted the good one with the log after it; damage to the new one then refused the start.
        let afterFallback = try DataFiles.snapshots(data)
        #expect(afterFallback.contains(snapshots[0]), "the last good snapshot is kept: \(afterFallback.map(\.lastPathComponent))")
        let newer = try #require(afterFallback.last)
        try DataFiles.flipBit(in: newer, at: 20, bit: 0)
        let again = try await DurableServer.start(DurableServer.patientExit, dataDirectory: data)
        #expect(again.logText.contains("loaded snapshot") && again.logText.contains(snapshots[0].lastPathComponent), "\(again.logText)")
        try Self.expectHistory("room:snap", before + after + late, port: again.port, user: "snap_writer")
        try Self.expectHistory("room:snap-other", other, port: again.port, user: "snap_other")
        #expect(try await again.stop() == 0)
    }

    // MARK: 5. Missing data directory

    @Test func missingDataDirectoryIsCreated() async throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-missing-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: parent) }
        let data = parent.appendingPathComponent("nested/data")
        #expect(!FileManager.default.fileExists(atPath: parent.path))
        let server = try await DurableServer.start(dataDirectory: data)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: data.path, isDirectory: &isDirectory) && isDirectory.boolValue)
        let permissions = try FileManager.default.attributesOfItem(atPath: data.path)[.posixPermissions] as? Int
        #expect(permissions == 0o700, "the data directory is private: \(String(permissions ?? 0, radix: 8))")
        let sent = try Self.publish(3, to: "room:fresh", as: "fresh_writer", port: server.port)
        #expect(try await server.stop() == 0)
        let restarted = try await DurableServer.start(dataDirectory: data)
        try Self.expectHistory("room:fresh", sent, port: restarted.port, user: "fresh_writer")
        #expect(try await restarted.stop() == 0)
    }
}
