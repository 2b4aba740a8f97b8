import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import HuddleIO
import HuddleWebSocket
import Synchronization
import Testing

/// The non-blocking connection on a test-owned loop: what it refuses, how it queues.
@Suite(.ownThread) struct ClientConnectionTests {
    @Test func sendsInOneTurnAreCorkedAndTheQueueIsBounded() async throws {
        let server = try await ServerProcess(["--bench"])
        let harness = try TestLoop()
        defer { harness.stop() }
        let delegate = RecordingDelegate()
        var options = ClientConnectionOptions()
        options.maxOutboundBytes = 1500
        options.compression = nil
        let url = try ClientURL("\(server.url)/echo")
        let connection = await harness.run { [options] in
            let connection = WebSocketClientConnection(url: url, loop: harness.loop, options: options, delegate: delegate)
            connection.connect()
            return SendableBox(connection)
        }
        try await eventually { delegate.opened }

        let message = [UInt8](repeating: 7, count: 1000)
        let (accepted, queuedWithinTheTurn) = await harness.run {
            let accepted = (0..<3).map { _ in connection.value.send(binary: message) }
            return (accepted, connection.value.queuedByteCount)
        }
        // Admitted while under the bound (so at most bound + one message waits), then refused.
        #expect(accepted == [true, true, false])
        // Nothing left during the turn: two masked frames (4-byte header + 4-byte key each) wait.
        #expect(queuedWithinTheTurn == 2 * (1000 + 8))
        try await eventually { delegate.received.count == 2 }
        // Written at the end of that turn, the queue is empty and takes messages again.
        #expect(await harness.run { connection.value.queuedByteCount } == 0)
        #expect(await harness.run { connection.value.send(binary: message) })
        try await eventually { delegate.received.count == 3 }

        await harness.run { connection.value.close() }
        try await eventually { !delegate.closes.isEmpty }
        #expect(delegate.closes == [.init(code: .normalClosure, reason: "", clean: true)])
        #expect(try await server.stop() == 0)
    }

    @Test func nothingIsSentBeforeOpenAndCloseBeforeOpenReportsOnce() async throws {
        let harness = try TestLoop()
        defer { harness.stop() }
        let delegate = RecordingDelegate()
        let url = try ClientURL("ws://127.0.0.1:9/echo")
        let refused = await harness.run {
            let connection = WebSocketClientConnection(url: url, loop: harness.loop, delegate: delegate)
            let before = connection.send(text: "too early")
            connection.connect()
            let during = connection.send(text: "still too early") || connection.ping()
            connection.close()
            connection.close()
            connection.abort()
            return !before && !during
        }
        #expect(refused)
        try await eventually { !delegate.closes.isEmpty }
        // Callbacks run on the harness loop: a turn of it after the first close has run anything
        // already due there (a second report would be), where a sleep only hoped to outlast it.
        await harness.run {}
        await harness.run {}
        #expect(delegate.closes.count == 1)
        #expect(delegate.closes.first?.code == nil)
        #expect(!delegate.opened)
    }

    /// The client's loop is held up (a long turn, a stopped process, a write blocked on a busy
    /// disk) past the connect deadline while the server's 101 is already in the socket: the
    /// connection opens. The deadline bounds the server's time; the time the client itself was
    /// not running is not the server's. (Issue 15: a stalled load generator counted its own
    /// stall as 19,199 connect timeouts, "waiting for the 101", while the server sat idle.)
    @Test func aLoopHeldUpPastTheConnectDeadlineOpensOnTheAnswerAlreadyThere() async throws {
        let listener = try LoopbackListener()
        defer { listener.stop() }
        let harness = try TestLoop()
        defer { harness.stop() }
        let delegate = RecordingDelegate()
        var options = ClientConnectionOptions()
        options.connectTimeoutMilliseconds = 300
        options.compression = nil
        let timeout = options.connectTimeoutMilliseconds
        let connectStarted = Mutex<Int64>(0)
        let loopHeld = DispatchSemaphore(value: 0)
        let answerSent = DispatchSemaphore(value: 0)
        listener.start { peer in
            guard let (head, _) = peer.receiveHead(),
                  let keyLine = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("sec-websocket-key:") })
            else { return }
            let key = keyLine.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)
            // Hold the client's loop up, then answer while it cannot look, and keep it held
            // until its connect deadline (and a sweep after it) has passed.
            harness.loop.execute {
                loopHeld.signal()
                answerSent.wait()
                let pastTheDeadline = connectStarted.withLock { $0 } + timeout + 100
                while MonotonicClock.milliseconds() < pastTheDeadline { usleep(10_000) }
            }
            loopHeld.wait()
            peer.send(WebSocketHandshake.upgradeResponse(key: key, extensionHeader: nil, subprotocol: nil))
            answerSent.signal()
            // Keep the connection until the client ends it.
            while peer.receive() != nil {}
        }
        let url = try ClientURL("ws://127.0.0.1:\(listener.port)/")
        let connection = await harness.run { [options] in
            connectStarted.withLock { $0 = MonotonicClock.milliseconds() }
            let connection = WebSocketClientConnection(url: url, loop: harness.loop, options: options, delegate: delegate)
            connection.connect()
            return SendableBox(connection)
        }
        try await eventually { delegate.opened || !delegate.closes.isEmpty }
        #expect(delegate.opened, "closed instead: \(delegate.closes)")
        await harness.run { connection.value.abort() }
    }
}

// MARK: Helpers for tests that drive connections on their own loop

/// An event loop on its own thread for one test.
final class TestLoop: Sendable {
    let loop: EventLoop
    private let thread: LoopThread

    init() throws {
        let loop = try EventLoop(index: 0)
        self.loop = loop
        thread = try LoopThread.spawn(name: "client-test") { loop.run() }
    }

    func stop() {
        loop.stop()
        thread.join()
    }

    /// Runs `body` on the loop's thread and returns its result.
    func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            loop.execute { continuation.resume(returning: body()) }
        }
    }
}

/// Carries a loop-confined object through `@Sendable` closures; use `value` on its loop only.
struct SendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Records what a connection reports, readable from the test's thread.
final class RecordingDelegate: ClientConnectionDelegate, Sendable {
    private struct Record {
        var opened = false
        var extensions: [String] = []
        var received: [WebSocketEvent] = []
        var closes: [BlockingWebSocketClient.CloseResult] = []
        var handshakeStatus: Int?
    }

    private let record = Mutex(Record())

    var opened: Bool { record.withLock { $0.opened } }
    var received: [WebSocketEvent] { record.withLock { $0.received } }
    var closes: [BlockingWebSocketClient.CloseResult] { record.withLock { $0.closes } }
    var handshakeStatus: Int? { record.withLock { $0.handshakeStatus } }

    func webSocketDidOpen(_ connection: WebSocketClientConnection, subprotocol: String?, extensions: [String]) {
        record.withLock {
            $0.opened = true
            $0.extensions = extensions
        }
    }

    func webSocket(_ connection: WebSocketClientConnection, didReceive event: WebSocketEvent) {
        record.withLock { $0.received.append(event) }
    }

    func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool) {
        let status = connection.handshakeStatus
        record.withLock {
            $0.closes.append(.init(code: code, reason: reason, clean: clean))
            $0.handshakeStatus = status
        }
    }
}

/// Polls `condition` until it holds; fails after `timeout` seconds.
func eventually(timeout: Double = 10, _ what: String = "condition", _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("\(what) not met within \(timeout) s") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
