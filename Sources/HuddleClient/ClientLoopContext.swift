import HuddleIO
import HuddleWebSocket
import Synchronization

/// What every client connection on one event loop shares, so that a connection itself stays
/// small: the end-of-turn flush of corked writes, one sweep for every deadline (connect, close)
/// instead of a timer per connection, one more for every `HuddleClient` (request timeouts,
/// reconnect delays, heartbeats), the masking-key generator, TLS contexts, and the zlib
/// streams of connections that agreed to no_context_takeover.
///
/// Touched only on its loop's thread: the registry, which every thread may search, holds it in
/// a `LoopBound`. Created by the first connection that connects on a loop; the loop keeps it
/// alive through its end-of-turn hook and it dies with the loop.
final class ClientLoopContext {
    unowned let loop: EventLoop
    private let pendingFlushes = PendingFlushes<WebSocketClientConnection>()
    /// Connections with a deadline (connecting, handshaking, closing); open ones have none.
    private var timed = SlottedList<WebSocketClientConnection>(slot: \.timedSlot)
    private var sweepTimer: Int?
    private var sweepLateness = SweepLateness(interval: sweepInterval)
    /// Protocol clients: each checks its own deadlines when swept.
    private var clients = SlottedList<HuddleClient>(slot: \.sweepSlot)
    private var clientSweepTimer: Int?
    private var clientSweepLateness = SweepLateness(interval: clientSweepInterval)
    private var deferred: [() -> Void] = []
    private var maskingKeys = MaskingKeyGenerator()
    private var tlsContexts: [ClientTLSOptions: TLSClientContext] = [:]
    /// Compressors for connections that agreed to client_no_context_takeover, by window size:
    /// each message starts from a reset state, so one stream serves them all.
    private var sharedDeflaters: [Int: PerMessageDeflater] = [:]
    /// Decompresses for every connection whose server agreed to server_no_context_takeover: a
    /// 15-bit window reads any smaller one, and zlib memory appears only once a compressed
    /// message actually arrives.
    private(set) lazy var sharedInflater = PerMessageInflater(windowBits: 15, noContextTakeover: true)

    /// How often deadlines are checked: they fire up to this late.
    static let sweepInterval: Int64 = 50
    /// How often protocol clients are swept: request timeouts, reconnect delays and heartbeats
    /// are seconds long, so a tenth of a second late is on time.
    static let clientSweepInterval: Int64 = 100

    private init(loop: EventLoop) {
        self.loop = loop
    }

    // MARK: Finding a loop's context

    private struct Entry: Sendable {
        weak var loop: EventLoop?
        weak var context: LoopBound<ClientLoopContext>?
    }

    private static let registry = Mutex<[ObjectIdentifier: Entry]>([:])

    /// The context of `loop`, created on first use. Must be called on `loop`'s thread.
    static func of(_ loop: EventLoop) -> ClientLoopContext {
        let found = registry.withLock { entries -> LoopBound<ClientLoopContext> in
            let key = ObjectIdentifier(loop)
            // The loop check matters: a dead loop's identifier can be reused by a new loop.
            if let entry = entries[key], entry.loop === loop, let context = entry.context {
                return context
            }
            entries = entries.filter { $0.value.loop != nil && $0.value.context != nil }
            let context = LoopBound(ClientLoopContext(loop: loop), loop: loop)
            loop.onTurnEnd { context.value.turnEnded() }
            entries[key] = Entry(loop: loop, context: context)
            return context
        }
        return found.value
    }

    // MARK: Shared state

    func nextMaskingKey() -> UInt32 { maskingKeys.next() }

    func tlsContext(for options: ClientTLSOptions) throws -> TLSClientContext {
        if let context = tlsContexts[options] { return context }
        let context = try TLSClientContext(caFile: options.caFile, insecure: options.insecure)
        tlsContexts[options] = context
        return context
    }

    func sharedDeflater(windowBits: Int) -> PerMessageDeflater {
        if let deflater = sharedDeflaters[windowBits] { return deflater }
        let deflater = PerMessageDeflater(windowBits: windowBits, noContextTakeover: true)
        sharedDeflaters[windowBits] = deflater
        return deflater
    }

    // MARK: The end of a loop turn

    func markDirty(_ connection: WebSocketClientConnection) {
        pendingFlushes.mark(connection)
    }

    /// Runs `body` at the end of the current loop turn: how a failure found inside a caller's
    /// `connect()` reaches the delegate without re-entering the caller.
    func runAtTurnEnd(_ body: @escaping () -> Void) {
        deferred.append(body)
        // If no turn is under way (connect() before the loop runs), make sure one happens soon.
        loop.execute {}
    }

    private func turnEnded() {
        if !deferred.isEmpty {
            var index = 0
            while index < deferred.count {
                deferred[index]()
                index += 1
            }
            deferred.removeAll()
        }
        pendingFlushes.flushAll()
    }

    // MARK: Deadlines

    func track(_ connection: WebSocketClientConnection) {
        timed.append(connection)
        if sweepTimer == nil {
            sweepLateness.started(at: MonotonicClock.milliseconds())
            sweepTimer = loop.schedule(after: Self.sweepInterval, repeating: Self.sweepInterval) { [unowned self] in
                sweep()
            }
        }
    }

    func untrack(_ connection: WebSocketClientConnection) {
        timed.remove(connection)
    }

    private func sweep() {
        let now = MonotonicClock.milliseconds()
        if let heldUp = sweepLateness.heldUp(at: now) {
            // An upgrade held with the loop (its connect completed during the hold) goes out
            // only now: judge on the next run.
            for connection in timed.elements { connection.postponeDeadline(by: heldUp) }
            return
        }
        // A connection whose deadline passed leaves the list (swap-remove): walk a copy.
        for connection in timed.elements where connection.deadline <= now {
            connection.deadlinePassed()
        }
        if timed.isEmpty, let sweepTimer {
            // Idle loops should not wake up for nothing.
            loop.cancelTimer(sweepTimer)
            self.sweepTimer = nil
        }
    }

    // MARK: Protocol clients

    /// Sweeps `client` from now until `unwatch`.
    func watch(_ client: HuddleClient) {
        clients.append(client)
        if clientSweepTimer == nil {
            clientSweepLateness.started(at: MonotonicClock.milliseconds())
            clientSweepTimer = loop.schedule(after: Self.clientSweepInterval, repeating: Self.clientSweepInterval) { [unowned self] in
                sweepClients()
            }
        }
    }

    func unwatch(_ client: HuddleClient) {
        clients.remove(client)
    }

    private func sweepClients() {
        let now = MonotonicClock.milliseconds()
        if let heldUp = clientSweepLateness.heldUp(at: now) {
            // Requests and pings held with the loop go out only at the end of this turn: judge
            // on the next run. Reconnect delays move on too, so the jittered spread of a loop's
            // waiting clients survives the hold instead of all of them retrying in this turn.
            for client in clients.elements { client.postponeDeadlines(by: heldUp) }
            return
        }
        // A client may stop (leave the list) or start another while being swept: walk a copy.
        for client in clients.elements { client.sweep(now: now) }
        if clients.isEmpty, let clientSweepTimer {
            loop.cancelTimer(clientSweepTimer)
            self.clientSweepTimer = nil
        }
    }
}
