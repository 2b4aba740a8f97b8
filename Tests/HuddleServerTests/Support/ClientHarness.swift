import Foundation
import HuddleClient
import HuddleIO
import HuddleProtocol
import Synchronization

/// A `HuddleClient` on a loop thread of its own, for tests: calls hop to the loop and are
/// awaited, and every event the client emits is recorded for the test to inspect.
final class ClientHarness: @unchecked Sendable {
    let testLoop: TestLoop
    /// Loop-confined: use it only inside `run` or `call`.
    private let box: SendableBox<HuddleClient>
    private let recorded = EventRecord()
    private let stopped = Mutex(false)

    /// A client for `url` (the server's `ws://…`; `/v1` is added), started at once.
    init(url: String, credentials: HuddleCredentials = .none, configure: (inout HuddleClientConfiguration) -> Void = { _ in }) async throws {
        var configuration = HuddleClientConfiguration(url: try ClientURL(url + "/v1"), credentials: credentials)
        configuration.reconnect = ReconnectPolicy(initialDelayMilliseconds: 100, maxDelayMilliseconds: 1_000)
        configure(&configuration)
        let testLoop = try TestLoop()
        self.testLoop = testLoop
        let recorded = self.recorded
        let loop = testLoop.loop
        box = await testLoop.run { [configuration] in
            let client = HuddleClient(configuration: configuration, runLoop: ClientRunLoop(loop))
            client.onEvent = { event in recorded.append(event) }
            client.start()
            return SendableBox(client)
        }
    }

    deinit { shutDown() }

    /// Stops the client and its loop (also done when the harness goes away).
    func shutDown() {
        guard !stopped.withLock({ let was = $0; $0 = true; return was }) else { return }
        let box = self.box
        testLoop.loop.execute { box.value.stop() }
        testLoop.stop()
    }

    /// Runs `body` with the client on its loop.
    func run<Result: Sendable>(_ body: @escaping @Sendable (HuddleClient) -> Result) async -> Result {
        let box = self.box
        return await testLoop.run { body(box.value) }
    }

    /// Calls a typed operation (`body` passes its completion on) and waits for the outcome.
    func call<Value: Sendable>(
        _ body: @escaping @Sendable (HuddleClient, @escaping (Result<Value, HuddleClientError>) -> Void) -> Void
    ) async -> Result<Value, HuddleClientError> {
        let box = self.box
        let loop = testLoop.loop
        return await withCheckedContinuation { continuation in
            loop.execute { body(box.value) { continuation.resume(returning: $0) } }
        }
    }

    /// `call`, which must succeed.
    @discardableResult
    func ok<Value: Sendable>(
        _ what: String = "request",
        _ body: @escaping @Sendable (HuddleClient, @escaping (Result<Value, HuddleClientError>) -> Void) -> Void
    ) async throws -> Value {
        switch await call(body) {
        case .success(let value): return value
        case .failure(let error): throw TestFailure("\(what) failed: \(error)")
        }
    }

    /// `call`, which must fail: its error.
    func failure<Value: Sendable>(
        _ what: String = "request",
        _ body: @escaping @Sendable (HuddleClient, @escaping (Result<Value, HuddleClientError>) -> Void) -> Void
    ) async throws -> HuddleClientError {
        switch await call(body) {
        case .success(let value): throw TestFailure("\(what) succeeded with \(value) instead of failing")
        case .failure(let error): return error
        }
    }

    var events: [HuddleEvent] { recorded.events }

    /// The publications delivered on `channel`, in delivery order.
    func publications(on channel: String) -> [ChannelPublication] {
        events.compactMap { event in
            if case .publication(let publication) = event, publication.channel == channel { return publication }
            return nil
        }
    }

    var state: HuddleClient.State {
        get async { await run { $0.state } }
    }

    /// Waits until the recorded events satisfy `condition`.
    func waitFor(_ what: String, timeout: Double = 15, _ condition: @escaping ([HuddleEvent]) -> Bool) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !condition(events) {
            guard ContinuousClock.now < deadline else { throw TestFailure("\(what) not seen within \(timeout) s; events: \(events.suffix(20))") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits for the client to be signed in and ready (`connected` events so far: `count`).
    func waitUntilConnected(times count: Int = 1, timeout: Double = 15) async throws {
        try await waitFor("\(count) connected events", timeout: timeout) { events in
            events.filter { if case .connected = $0 { return true } else { return false } }.count >= count
        }
    }

    /// The events of one kind, by a pattern test.
    func count(_ matches: (HuddleEvent) -> Bool) -> Int { events.filter(matches).count }
}

/// The events a client emitted, shared between its loop and the test.
final class EventRecord: Sendable {
    private let list = Mutex<[HuddleEvent]>([])

    func append(_ event: HuddleEvent) { list.withLock { $0.append(event) } }

    var events: [HuddleEvent] { list.withLock { $0 } }
}

extension HuddleEvent {
    var isConnected: Bool { if case .connected = self { return true } else { return false } }
    var isReconnecting: Bool { if case .reconnecting = self { return true } else { return false } }
    var stopReason: HuddleStopReason? { if case .stopped(let reason) = self { return reason } else { return nil } }
}

/// The password ProtocolClient and these tests give every test user.
let testPassword = ProtocolClient.password
