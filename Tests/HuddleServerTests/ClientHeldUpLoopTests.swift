import ChildProcessExit
import Foundation
import HuddleClient
import HuddleIO
import HuddleProtocol
import HuddleWebSocket
import Synchronization
import Testing

/// A `HuddleClient` whose loop is held up — a phone app suspended in the background, a blocked
/// write, a busy machine — past its deadlines while the server's answers are already in the
/// socket: on resuming it reads them before judging anything, so it neither times out a request
/// whose reply is there nor drops a connection whose pong is there, and its waiting clients
/// keep the spread of their reconnect delays. The loop is held deterministically: a job on it
/// blocks until the scripted server has sent, and then past the deadline.
@Suite(.ownThread) struct ClientHeldUpLoopTests {
    @Test func aRequestWhoseReplyArrivedDuringAHoldGetsItsReply() async throws {
        let listener = try LoopbackListener()
        defer { listener.stop() }
        let loop = try TestLoop()
        defer { loop.stop() }
        let timeout: Int64 = 1_000
        let requestSent = Mutex<Int64>(0)
        let loopHeld = DispatchSemaphore(value: 0)
        let replySent = DispatchSemaphore(value: 0)
        listener.start { peer in
            guard var server = ScriptedHuddlePeer.accept(peer), let id = server.nextRequestID() else { return }
            // Hold the client's loop, answer while it cannot look, and keep it held past the
            // request's deadline and a sweep after it.
            loop.loop.execute {
                let holdStart = MonotonicClock.milliseconds()
                loopHeld.signal()
                _ = replySent.wait(timeout: .now() + 30)
                hold(until: max(requestSent.withLock { $0 } + timeout + 200, holdStart + 500))
            }
            _ = loopHeld.wait(timeout: .now() + 30)
            server.send(text: #"{"id":"\#(id)","ok":true,"result":{"friends":[]}}"#)
            replySent.signal()
            while server.next() != nil {}
        }
        let events = EventRecord()
        let client = try await startClient(port: listener.port, on: loop, events: events) { $0.requestTimeoutMilliseconds = timeout }
        let outcome = await withCheckedContinuation { continuation in
            loop.loop.execute {
                requestSent.withLock { $0 = MonotonicClock.milliseconds() }
                client.value.friends { continuation.resume(returning: $0) }
            }
        }
        #expect(outcome == .success([]), "the reply was in the socket when the loop resumed")
        await loop.run { client.value.stop() }
    }

    /// A request issued just before a hold goes out only once the loop resumes (a client's
    /// writes leave at the end of its turn): the server has had none of the time the hold
    /// swallowed, so the request is not timed out unsent, and the answer it then gets is taken.
    @Test func aRequestIssuedJustBeforeAHoldIsNotTimedOutUnsent() async throws {
        let listener = try LoopbackListener()
        defer { listener.stop() }
        let loop = try TestLoop()
        defer { loop.stop() }
        listener.start { peer in
            guard var server = ScriptedHuddlePeer.accept(peer), let id = server.nextRequestID() else { return }
            server.send(text: #"{"id":"\#(id)","ok":true,"result":{"friends":[]}}"#)
            while server.next() != nil {}
        }
        let client = try await startClient(port: listener.port, on: loop, events: EventRecord()) { $0.requestTimeoutMilliseconds = 1_000 }
        let outcome = await withCheckedContinuation { continuation in
            loop.loop.execute {
                client.value.friends { continuation.resume(returning: $0) }
                // Past the deadline and a sweep after it.
                hold(until: MonotonicClock.milliseconds() + 1_200)
            }
        }
        #expect(outcome == .success([]), "timed out before it was sent")
        await loop.run { client.value.stop() }
    }

    @Test func aPongThatArrivedDuringAHoldKeepsTheConnection() async throws {
        let listener = try LoopbackListener()
        defer { listener.stop() }
        let loop = try TestLoop()
        defer { loop.stop() }
        let heartbeat = Heartbeat(pingAfterMilliseconds: 200, deadAfterMilliseconds: 1_000)
        let loopHeld = DispatchSemaphore(value: 0)
        let pongSent = DispatchSemaphore(value: 0)
        let connections = Mutex(0)
        let pingsAfterThePong = Mutex(0)
        let firstConnectionEnded = Mutex(false)
        listener.start { peer in
            guard var server = ScriptedHuddlePeer.accept(peer) else { return }
            guard connections.withLock({ $0 += 1; return $0 }) == 1 else {
                while server.next() != nil {}
                return
            }
            _ = loopHeld.wait(timeout: .now() + 30)
            server.send(opcode: .pong, [])
            pongSent.signal()
            // The client sent nothing but at most one ping before the hold (it waits for a
            // frame from us before the next): a second one means it kept the connection past it.
            while let event = server.next() {
                if case .ping = event { pingsAfterThePong.withLock { $0 += 1 } }
            }
            firstConnectionEnded.withLock { $0 = true }
        }
        let events = EventRecord()
        let client = try await startClient(port: listener.port, on: loop, events: events) { $0.heartbeat = heartbeat }
        // Past the heartbeat's dead line from the last frame the client heard, with a pong
        // unread in its socket.
        loop.loop.execute {
            let holdStart = MonotonicClock.milliseconds()
            loopHeld.signal()
            _ = pongSent.wait(timeout: .now() + 30)
            hold(until: holdStart + heartbeat.deadAfterMilliseconds + 200)
        }
        try await eventually(timeout: 30, "two pings or the end of the connection") {
            pingsAfterThePong.withLock { $0 } >= 2 || firstConnectionEnded.withLock { $0 }
        }
        #expect(pingsAfterThePong.withLock { $0 } >= 2, "dropped instead: \(events.events)")
        #expect(!events.events.contains { $0.isReconnecting }, "\(events.events)")
        await loop.run { client.value.stop() }
    }

    /// A loop that is merely slow — every turn longer than the sweep's interval, as a load
    /// generator's under saturation — is late at every sweep, not held up once: it still
    /// times out a request the server never answers, instead of moving the deadline on forever.
    @Test func aLoopSlowAtEveryTurnStillTimesOutARequestNeverAnswered() async throws {
        let listener = try LoopbackListener()
        defer { listener.stop() }
        let loop = try TestLoop()
        defer { loop.stop() }
        listener.start { peer in
            guard var server = ScriptedHuddlePeer.accept(peer), server.nextRequestID() != nil else { return }
            while server.next() != nil {}
        }
        let events = EventRecord()
        let client = try await startClient(port: listener.port, on: loop, events: events) { $0.requestTimeoutMilliseconds = 1_000 }
        let slow = Mutex(true)
        @Sendable func slowTurn() {
            hold(until: MonotonicClock.milliseconds() + 250)
            if slow.withLock({ $0 }) { loop.loop.execute(slowTurn) }
        }
        let outcome = Mutex<Result<[Friend], HuddleClientError>?>(nil)
        loop.loop.execute {
            client.value.friends { result in outcome.withLock { $0 = result } }
            loop.loop.execute(slowTurn)
        }
        defer { slow.withLock { $0 = false } }
        try await eventually(timeout: 20, "the request's outcome") { outcome.withLock { $0 != nil } }
        #expect(outcome.withLock { $0 } == .failure(.timedOut))
        await loop.run { client.value.stop() }
    }

    /// Two clients of one loop wait to reconnect, one due long before the other; the loop is
    /// held past both. They do not both retry in the turn that ends the hold: each waits what
    /// was left of its own delay, so the jittered spread of a loop's clients (the load
    /// generator's thousands) survives a stall, and each makes one attempt, not one per delay
    /// it missed.
    @Test func reconnectDelaysKeepTheirSpreadAcrossAHold() async throws {
        let listener = try LoopbackListener()
        defer { listener.stop() }
        let loop = try TestLoop()
        defer { loop.stop() }
        let connections = Mutex(0)
        let bothArrived = DispatchSemaphore(value: 0)
        listener.start { peer in
            let number = connections.withLock { $0 += 1; return $0 }
            // Every later attempt fails at once; the first two end together, so that both
            // clients start waiting in the same moment.
            guard number <= 2, peer.receiveHead() != nil else { return }
            if number == 2 {
                bothArrived.signal()
                bothArrived.signal()
            }
            _ = bothArrived.wait(timeout: .now() + 30)
        }
        let script = SpreadScript()
        let url = try ClientURL("ws://127.0.0.1:\(listener.port)/v1")
        let clients = await loop.run {
            func client(delay: Int64) -> HuddleClient {
                var configuration = HuddleClientConfiguration(url: url)
                configuration.reconnect = ReconnectPolicy(initialDelayMilliseconds: delay, maxDelayMilliseconds: 30_000, jitter: 0)
                return HuddleClient(configuration: configuration, runLoop: ClientRunLoop(loop.loop))
            }
            let soon = client(delay: 600), late = client(delay: 3_000)
            let soonBox = SendableBox(soon)
            func bothWaiting() {
                guard script.record.withLock({ $0.waiting += 1; return $0.waiting }) == 2 else { return }
                loop.loop.execute {
                    let soonStillWaiting = soonBox.value.state == .waiting
                    script.record.withLock { $0.holdFoundSoonWaiting = soonStillWaiting }
                    hold(until: script.record.withLock { $0.lateRetryAt } + 200)
                }
            }
            soon.onEvent = { event in
                guard case .reconnecting(let attempt, _, _) = event else { return }
                let lateState = late.state
                script.record.withLock {
                    $0.soonAttempts.append(attempt)
                    if attempt == 2 { $0.lateAtSoonsSecondAttempt = (lateState, $0.lateAttempts) }
                }
                if attempt == 1 { bothWaiting() }
            }
            late.onEvent = { event in
                guard case .reconnecting(let attempt, let delay, _) = event else { return }
                script.record.withLock {
                    $0.lateAttempts.append(attempt)
                    if attempt == 1 { $0.lateRetryAt = MonotonicClock.milliseconds() + delay }
                }
                if attempt == 1 { bothWaiting() }
            }
            soon.start()
            late.start()
            return SendableBox((soon, late))
        }
        try await eventually(timeout: 30, "the late client's second attempt") { script.record.withLock { $0.lateAttempts.count >= 2 } }
        await loop.run {
            clients.value.0.stop()
            clients.value.1.stop()
        }
        let record = script.record.withLock { $0 }
        #expect(record.holdFoundSoonWaiting == true, "the first client retried before the hold began: the round proves nothing")
        guard let (lateState, lateAttempts) = record.lateAtSoonsSecondAttempt else {
            Issue.record("the first client made no second attempt: \(record.soonAttempts)")
            return
        }
        #expect(lateState == .waiting && lateAttempts == [1], "both retried in the turn that ended the hold: \(lateState), \(lateAttempts)")
        #expect(record.lateAttempts.prefix(2) == [1, 2], "one attempt after the hold, not one per missed delay: \(record.lateAttempts)")
    }
}

/// What the two clients of `reconnectDelaysKeepTheirSpreadAcrossAHold` did, filled on their loop.
final class SpreadScript: Sendable {
    struct Record {
        var waiting = 0
        var lateRetryAt: Int64 = 0
        var holdFoundSoonWaiting: Bool?
        var soonAttempts: [Int] = []
        var lateAttempts: [Int] = []
        var lateAtSoonsSecondAttempt: (HuddleClient.State, [Int])?
    }

    let record = Mutex(Record())
}

/// Keeps the calling loop's thread busy until `deadline` (monotonic ms): a held-up loop.
private func hold(until deadline: Int64) {
    while MonotonicClock.milliseconds() < deadline { usleep(10_000) }
}

/// An anonymous `HuddleClient` of the scripted server on `port`, started on `loop` and connected.
private func startClient(
    port: Int, on loop: TestLoop, events: EventRecord, configure: (inout HuddleClientConfiguration) -> Void
) async throws -> SendableBox<HuddleClient> {
    var configuration = HuddleClientConfiguration(url: try ClientURL("ws://127.0.0.1:\(port)/v1"))
    configure(&configuration)
    let client = await loop.run { [configuration] in
        let client = HuddleClient(configuration: configuration, runLoop: ClientRunLoop(loop.loop))
        client.onEvent = { events.append($0) }
        client.start()
        return SendableBox(client)
    }
    try await eventually(timeout: 15, "connected") { events.events.contains { $0.isConnected } }
    return client
}

/// One connection of a scripted Huddle server: the upgrade, then frames read and written by
/// hand; pings are answered as they are read, and a close is echoed.
struct ScriptedHuddlePeer {
    let peer: LoopbackListener.Peer
    private var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
    private var pending: [WebSocketEvent] = []

    private init(peer: LoopbackListener.Peer) { self.peer = peer }

    /// Answers the client's upgrade (`huddle.v1`, no compression); nil if it went away first.
    static func accept(_ peer: LoopbackListener.Peer) -> ScriptedHuddlePeer? {
        guard let (head, rest) = peer.receiveHead(),
              let keyLine = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("sec-websocket-key:") })
        else { return nil }
        let key = keyLine.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)
        peer.send(WebSocketHandshake.upgradeResponse(key: key, extensionHeader: nil, subprotocol: "huddle.v1"))
        var scripted = ScriptedHuddlePeer(peer: peer)
        scripted.feed(rest)
        return scripted
    }

    /// The next frame or message from the client; nil once the connection ends or closes.
    mutating func next() -> WebSocketEvent? {
        while pending.isEmpty {
            guard let bytes = peer.receive() else { return nil }
            feed(bytes)
        }
        let event = pending.removeFirst()
        switch event {
        case .ping(let payload):
            send(opcode: .pong, payload)
        case .close:
            send(opcode: .close, [])
            return nil
        default:
            break
        }
        return event
    }

    /// The `id` of the client's next request.
    mutating func nextRequestID() -> String? {
        while let event = next() {
            if case .text(let bytes) = event, let request = try? JSONParser.parse(bytes, maxDepth: 16) {
                return request["id"]?.stringValue
            }
        }
        return nil
    }

    func send(text: String) { send(opcode: .text, Array(text.utf8)) }

    func send(opcode: WebSocketOpcode, _ payload: [UInt8]) {
        peer.send(WebSocketFrameWriter.frame(opcode: opcode, payload: payload))
    }

    private mutating func feed(_ bytes: [UInt8]) {
        var events: [WebSocketEvent] = []
        bytes.withUnsafeBytes { bytes in
            try? reader.read(bytes) { events.append($0) }
        }
        pending += events
    }
}
