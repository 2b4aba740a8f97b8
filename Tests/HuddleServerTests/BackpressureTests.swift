import ChildProcessExit
import Foundation
import HuddleWebSocket
import Synchronization
import Testing

/// protocol.md "Backpressure": a reader is judged by whether it drains over time, not by how
/// much one burst queued; when readers cannot keep up, the publisher is the one held back.
@Suite(.ownThread) struct BackpressureTests {
    /// Issue 12, problem 1: one user's 8 connections each send the burst the rate limit allows
    /// (100 publishes of 16 KiB) into one room. A subscriber that reads as fast as it can keeps
    /// its connection and receives every publication; the publishers are the ones told to wait
    /// (`busy`, or `rate_limited` under a per-user rate limit) and send again.
    @Test func aBurstIntoARoomReachesAFastReaderWhole() async throws {
        // fsync on every turn, as deployed: publishes that arrive during one fsync are handled
        // in the next turn together, and their fan-out is queued at once.
        let server = try await startHuddle(["--threads", "4"], fsync: "always")
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let (reader, _) = try ProtocolClient.signedUp("bob", port: server.port)
        try reader.subscribe("room:burst")
        let connections = 8, perConnection = 100
        let received = ReaderTally()
        let readerThread = ReaderThread {
            // Reads as fast as the socket allows until every publication arrived or the
            // connection ended.
            while received.count < connections * perConnection {
                do {
                    let event = try reader.nextEvent(timeout: 30)
                    if event["event"] as? String == "publication" { received.add() }
                } catch {
                    received.end("\(error)")
                    return
                }
            }
        }
        let chunk = String(repeating: "x", count: 16_000)
        let publishers = try (0..<connections).map { _ in try ProtocolClient(port: server.port, credential: .header(token)) }
        for publisher in publishers { _ = try publisher.nextEvent("session") }
        // Every connection writes its whole burst at once, each on its own thread; then each
        // sends again what was refused until all is stored (on its own thread, so none waits
        // idle for the others).
        let failures = Mutex<[String]>([])
        let senders = publishers.enumerated().map { index, publisher in
            let requests = UncheckedBox((0..<perConnection).map { n in
                ("publish", ["channel": "room:burst", "data": chunk, "client_id": "c\(index)-\(n)"] as JSONObject)
            })
            return ReaderThread {
                do {
                    try publisher.settle(try publisher.sendBatch(requests.value), requests.value)
                } catch {
                    failures.withLock { $0.append("publisher \(index): \(error)") }
                }
            }
        }
        for sender in senders { await sender.join() }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        await readerThread.join()
        #expect(received.ending == nil, "the reader's connection ended: \(received.ending ?? "")")
        #expect(received.count == connections * perConnection)
        #expect(JSON.int(try reader.ok("history", ["channel": "room:burst", "limit": 1])["offset"]) == connections * perConnection)
    }

    /// A subscriber that has fallen behind but still reads holds the channel's publishers back:
    /// `publish` answers `busy` with `retry_after_ms` and stores nothing; once the reader has
    /// read what was queued, publishing goes on and it receives everything, in order.
    @Test func aPublishWaitsWhileAReaderIsBehind() async throws {
        let server = try await startHuddle()
        let (publisher, publisherToken) = try ProtocolClient.signedUp("alice", port: server.port)
        let (_, token) = try ProtocolClient.signedUp("bob", port: server.port)
        let reader = try ProtocolClient.slowSubscriber("room:pace", token: token, port: server.port)
        // Batches of 90 × 16 KB while the reader reads nothing: once what the kernel's socket
        // buffers take (a few MiB on loopback) and the 1 MiB threshold are full, the next
        // publish is refused. Each batch on a fresh connection, within its rate limit.
        let chunk = String(repeating: "x", count: 16_000)
        var stored = 0
        var busy: [JSONObject] = []
        for _ in 0..<40 where busy.isEmpty {
            let batch = try ProtocolClient(port: server.port, credential: .header(publisherToken))
            let replies = try batch.pipeline((0..<90).map { _ in ("publish", ["channel": "room:pace", "data": chunk] as JSONObject) })
            stored += replies.filter { JSON.bool($0["ok"]) == true }.count
            let errors = replies.compactMap { $0["error"] as? JSONObject }
            // Over the user's fair share of bytes published: wait as told (it stored nothing).
            let rateLimited = errors.filter { $0["code"] as? String == "rate_limited" }
            busy += errors.filter { $0["code"] as? String != "rate_limited" }
            if let wait = rateLimited.compactMap({ JSON.int($0["retry_after_ms"]) }).max() { usleep(useconds_t(wait) * 1000) }
        }
        #expect(!busy.isEmpty, "\(stored) stored, none refused")
        #expect(busy.allSatisfy { $0["code"] as? String == "busy" && JSON.int($0["retry_after_ms"]) == 100 }, "\(busy.first.map(JSON.text) ?? "")")
        #expect(JSON.int(try publisher.ok("history", ["channel": "room:pace", "limit": 1])["offset"]) == stored, "a refused publish stored nothing")
        // The reader reads what it was sent; then its channel takes publications again.
        let received = try reader.publications(stored, timeout: 20)
        #expect(received.map { JSON.int($0["offset"]) } == (1...stored).map { $0 })
        let after = [("publish", ["channel": "room:pace", "data": "after"] as JSONObject)]
        try publisher.settle(try publisher.sendBatch(after), after)
        #expect(try reader.nextEvent("publication", timeout: 20)["data"] as? String == "after")
        let metrics = try PrometheusText.fetch(port: server.port)
        #expect((metrics.value("huddle_errors_total", ["code": "busy"]) ?? 0) >= Double(busy.count))
        #expect(metrics.value("huddle_slow_consumer_closes_total") == 0)
    }

    /// A reader is judged by time, not size: a queue far under the ceiling whose bytes are not
    /// read within `--slow-reader-timeout` is closed with 1008, and counted.
    @Test func bytesQueuedPastTheTimeoutCloseTheReader() async throws {
        let server = try await startHuddle(["--slow-reader-timeout", "1"])
        let (_, token) = try ProtocolClient.signedUp("alice", port: server.port)
        let stalled = try ProtocolClient.slowSubscriber("room:age", token: token, port: server.port)
        // Reads from the moment the server says it closed the reader (the close frame waits
        // behind what the kernel holds, which the reader has not read).
        let closeCode = Self.closeCode(once: server) { try stalled.closeCode(timeout: 20) }
        // About 8 MB, in batches on fresh connections (each within its rate limit): more than
        // the kernel's socket buffers hold, far under the 32 MiB ceiling. Publishes refused
        // `busy` while the reader is behind are sent again.
        let chunk = String(repeating: "x", count: 16_000)
        let requests = (0..<90).map { _ in ("publish", ["channel": "room:age", "data": chunk] as JSONObject) }
        for _ in 0..<6 {
            let batch = try ProtocolClient(port: server.port, credential: .header(token))
            try batch.settle(try batch.sendBatch(requests), requests)
        }
        #expect(await closeCode.value == "1008")
        let metrics = try PrometheusText.fetch(port: server.port)
        #expect(metrics.value("huddle_slow_consumer_closes_total", ["reason": "queue_age"]) == 1)
        #expect(metrics.value("huddle_slow_consumer_closes_total", ["reason": "queue_limit"]) == 0)
    }

    /// Issue 12, problem 1 on `/broadcast`: under a flood of 64 KiB messages, a reader that
    /// reads as fast as it can is kept and receives everything; a reader that reads nothing is
    /// closed with 1008.
    @Test func aFloodKeepsTheNormalReaderAndClosesTheStalledOne() async throws {
        let server = try await ServerProcess(["--bench", "--threads", "4"])
        let stalled = try RawClient(port: server.port, receiveTimeout: 60, receiveBufferSize: 4096)
        try stalled.upgrade(path: "/broadcast")
        let stalledCloseCode = Self.closeCode(once: server) { try stalled.readCloseCode() }
        let normal = try RawClient(port: server.port, receiveTimeout: 60)
        try normal.upgrade(path: "/broadcast")
        // Publishers on several connections (so on several I/O loops) flood at once.
        let publishers = try (0..<4).map { _ in
            let publisher = try RawClient(port: server.port, receiveTimeout: 60)
            try publisher.upgrade(path: "/broadcast")
            return publisher
        }
        let perPublisher = 250
        let messages = publishers.count * perPublisher  // 64 MiB in all
        // Every publisher is a subscriber too: each reads its own copies on a thread of its own.
        let readers = [normal] + publishers
        let tallies = readers.map { _ in ReaderTally() }
        let threads = zip(readers, tallies).map { client, tally in
            ReaderThread {
                while tally.count < messages {
                    do {
                        switch try client.nextEvent() {
                        case .binary: tally.add()
                        case .close(let code, _): return tally.end("closed \(code.map { "\($0.rawValue)" } ?? "-")")
                        case nil: return tally.end("EOF")
                        default: continue
                        }
                    } catch {
                        return tally.end("\(error)")
                    }
                }
            }
        }
        let message = [UInt8](repeating: 0x61, count: 64 * 1024)
        let senders = publishers.map { publisher in
            ReaderThread {
                for _ in 0..<perPublisher {
                    guard (try? publisher.sendFrame(.binary, message)) != nil else { return }
                }
            }
        }
        for thread in senders + threads { await thread.join() }
        #expect(tallies[0].ending == nil, "the normal reader's connection ended: \(tallies[0].ending ?? "")")
        #expect(tallies.map(\.count) == Array(repeating: messages, count: readers.count))
        #expect(await stalledCloseCode.value == "1008")
    }

    /// The close code `read` returns, read on a thread of its own as soon as the server has
    /// logged a slow-consumer close: a reader that reads nothing cannot receive its close frame,
    /// one that reads again within the slow-reader timeout does. (A thread, not a task: the
    /// test's blocking clients may hold every thread of the cooperative pool meanwhile.)
    fileprivate static func closeCode(once server: ServerProcess, _ read: @escaping () throws -> WebSocketCloseCode?) -> CloseCodeWatch {
        let watch = CloseCodeWatch()
        watch.thread = ReaderThread {
            let giveUp = Date().addingTimeInterval(60)
            while !server.logText.contains("closing slow consumer") {
                guard Date() < giveUp else { return watch.result.withLock { $0 = "no slow-consumer close within 60 s" } }
                usleep(10_000)
            }
            do {
                let code = try read()
                watch.result.withLock { $0 = code.map { "\($0.rawValue)" } ?? "EOF without a close frame" }
            } catch {
                watch.result.withLock { $0 = "\(error)" }
            }
        }
        return watch
    }
}

/// What `BackpressureTests.closeCode(once:_:)` read: the close code as text, or what happened instead.
private final class CloseCodeWatch: @unchecked Sendable {
    let result = Mutex<String?>(nil)
    var thread: ReaderThread?

    var value: String? {
        get async {
            await thread?.join()
            return result.withLock { $0 }
        }
    }
}

/// What a reader thread saw: messages counted, and why it stopped early (nil if it did not).
private final class ReaderTally: Sendable {
    private let state = Mutex<(count: Int, ending: String?)>((0, nil))
    var count: Int { state.withLock { $0.count } }
    var ending: String? { state.withLock { $0.ending } }
    func add() { state.withLock { $0.count += 1 } }
    func end(_ reason: String) { state.withLock { $0.ending = reason } }
}

/// A blocking client loop on a thread of its own, so a test can read while it writes.
private final class ReaderThread: Sendable {
    private let state = Mutex<(finished: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// `body` owns the clients it uses until it returns.
    init(_ body: @escaping () -> Void) {
        let box = UncheckedBox(body)
        Thread { [self] in
            box.value()
            self.state.withLock { state in
                state.finished = true
                state.waiter?.resume()
                state.waiter = nil
            }
        }.start()
    }

    /// Returns once the body has returned.
    func join() async {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                if state.finished { continuation.resume() } else { state.waiter = continuation }
            }
        }
    }
}

private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
