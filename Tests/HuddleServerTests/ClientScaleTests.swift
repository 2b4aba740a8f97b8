import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import HuddleIO
import HuddleWebSocket
import Synchronization
import Testing

/// Many connections on ONE loop thread: the load-test harness's shape. Figures (time, memory)
/// are printed, not asserted: speed is the harness's business, not a unit test's.
@Suite(.ownThread) struct ClientScaleTests {
    @Test func twoThousandConnectionsOnOneLoopAllReceiveABroadcast() async throws {
        // More for a one-off measurement (the server's and this process's fd limits permitting).
        let count = ProcessInfo.processInfo.environment["HUDDLE_CLIENT_SCALE_CONNECTIONS"].flatMap(Int.init) ?? 2000
        let server = try await ServerProcess(["--bench"])
        let harness = try TestLoop()
        defer { harness.stop() }
        let fleet = Fleet(url: try ClientURL("\(server.url)/broadcast"), loop: harness.loop, total: count)
        let clientBefore = residentBytes(of: "self")
        let serverBefore = residentBytes(of: "\(server.process.processIdentifier)")

        await harness.run { fleet.start() }
        try await eventually(timeout: 120, "\(count) connections open") {
            fleet.opened.load(ordering: .relaxed) == count || fleet.closed.load(ordering: .relaxed) > 0
        }
        try #require(fleet.closed.load(ordering: .relaxed) == 0, "\(fleet.firstFailure ?? "")")
        let clientGrowth = residentBytes(of: "self") - clientBefore
        let serverGrowth = residentBytes(of: "\(server.process.processIdentifier)") - serverBefore

        // One of them publishes; the server fans out to every subscriber, the publisher included.
        await harness.run { fleet.publish("hello to all \(count)") }
        try await eventually(timeout: 60, "every connection received the broadcast") {
            fleet.received.load(ordering: .relaxed) == count
        }

        await harness.run { fleet.closeAll() }
        try await eventually(timeout: 60, "every connection closed") { fleet.closed.load(ordering: .relaxed) == count }
        #expect(fleet.clean.load(ordering: .relaxed) == count)
        #expect(fleet.received.load(ordering: .relaxed) == count, "nobody receives twice")

        // Timed on the loop thread, so a busy test runner polling late does not skew them.
        let times = fleet.milestones.withLock { $0 }
        print("""
            [client-scale] \(count) connections on one loop: all open in \(times.opening) ms \
            (\(Int64(count) * 1000 / max(times.opening, 1)) connections/s), broadcast received by all in \(times.fanOut) ms, \
            closed cleanly in \(times.closing) ms; RSS growth: client \(clientGrowth / 1024) KiB \
            (\(clientGrowth / count) B/connection), server \(serverGrowth / 1024) KiB (\(serverGrowth / count) B/connection)
            """)
        #expect(try await server.stop() == 0)
    }
}

/// Drives `total` connections from the loop thread, at most `maxInFlight` handshakes at a time
/// (a burst of thousands of SYNs would overflow the server's accept backlog and stall on
/// retransmits, which measures the kernel rather than the client).
private final class Fleet: ClientConnectionDelegate, @unchecked Sendable {
    struct Milestones {
        var opening: Int64 = 0
        var fanOut: Int64 = 0
        var closing: Int64 = 0
    }

    let opened = Atomic<Int>(0)
    let received = Atomic<Int>(0)
    let closed = Atomic<Int>(0)
    let clean = Atomic<Int>(0)
    let milestones = Mutex(Milestones())
    private let failure = Mutex<String?>(nil)
    var firstFailure: String? { failure.withLock { $0 } }

    // Touched only on the loop thread.
    private let url: ClientURL
    private let loop: EventLoop
    private let total: Int
    private let maxInFlight = 200
    private var connections: [WebSocketClientConnection] = []
    private var inFlight = 0
    private var phaseStarted: Int64 = 0

    init(url: ClientURL, loop: EventLoop, total: Int) {
        self.url = url
        self.loop = loop
        self.total = total
    }

    func start() {
        if connections.isEmpty { phaseStarted = MonotonicClock.milliseconds() }
        while inFlight < maxInFlight && connections.count < total {
            let connection = WebSocketClientConnection(url: url, loop: loop, delegate: self)
            connections.append(connection)
            inFlight += 1
            connection.connect()
        }
    }

    func publish(_ text: String) {
        phaseStarted = MonotonicClock.milliseconds()
        connections[0].send(text: text)
    }

    func closeAll() {
        phaseStarted = MonotonicClock.milliseconds()
        for connection in connections { connection.close() }
    }

    private func elapsed() -> Int64 { MonotonicClock.milliseconds() - phaseStarted }

    func webSocketDidOpen(_ connection: WebSocketClientConnection, subprotocol: String?, extensions: [String]) {
        inFlight -= 1
        if opened.add(1, ordering: .relaxed).newValue == total {
            let time = elapsed()
            milestones.withLock { $0.opening = time }
        }
        start()
    }

    func webSocket(_ connection: WebSocketClientConnection, didReceive event: WebSocketEvent) {
        guard case .text = event else { return }
        if received.add(1, ordering: .relaxed).newValue == total {
            let time = elapsed()
            milestones.withLock { $0.fanOut = time }
        }
    }

    func webSocketDidClose(_ connection: WebSocketClientConnection, code: WebSocketCloseCode?, reason: String, clean: Bool) {
        if code == nil {
            failure.withLock { $0 = $0 ?? reason }
            inFlight -= 1
        }
        if clean { self.clean.add(1, ordering: .relaxed) }
        if closed.add(1, ordering: .relaxed).newValue == total {
            let time = elapsed()
            milestones.withLock { $0.closing = time }
        }
    }
}

/// Resident set size of a process (`self` or a pid), from /proc.
private func residentBytes(of process: String) -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/\(process)/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}
