import HuddleIO
import HuddleWebSocket
import Synchronization

/// `/broadcast` across every I/O loop: a message received on one loop is encoded once, handed
/// to each other loop as the same immutable bytes, and each loop copies them into its own
/// subscribers' write queues — which leave in one write per socket at the end of the loop turn.
final class BroadcastHub: Sendable {
    private let endpoints: [LoopBound<BroadcastEndpoint>]
    /// Subscribers (on any loop) that can take the shared compressed frame; while zero, no
    /// publication pays for compression.
    let compressedSubscribers = Atomic<Int>(0)
    /// Subscribers (on any loop) that are behind: while any is, a publisher's socket is not read
    /// (protocol.md, "Backpressure"; the raw endpoint has no replies to say `busy` with).
    let readersBehind = Atomic<Int>(0)

    init(loops: [EventLoop], maxMessageSize: Int) {
        self.endpoints = loops.map { LoopBound(BroadcastEndpoint(maxMessageSize: maxMessageSize), loop: $0) }
        // Before any loop runs, so the set-up thread still owns the endpoints.
        for endpoint in endpoints { endpoint.value.hub = self }
    }

    /// Before the loops run (or on loop `index`'s thread).
    func endpoint(forLoop index: Int) -> BroadcastEndpoint { endpoints[index].value }

    /// Called on loop `origin`'s thread.
    func publish(_ frame: SharedFrame, from origin: Int) {
        for index in endpoints.indices where index != origin {
            endpoints[index].execute { $0.deliver(frame) }
        }
        endpoints[origin].value.deliver(frame)
    }

    /// Called on the thread of the loop whose reader caught up (or closed).
    func readerCaughtUp() {
        guard readersBehind.subtract(1, ordering: .relaxed).newValue == 0 else { return }
        for endpoint in endpoints {
            endpoint.execute { $0.resumeHeldPublishers() }
        }
    }
}

/// One loop's share of `/broadcast`: its subscribers, touched only on that loop's thread.
/// Other threads reach it only through the hub's `LoopBound`s.
final class BroadcastEndpoint: WebSocketEndpoint {
    let maxMessageSize: Int
    /// Set once by the hub before any loop runs. Strong on purpose: hub and endpoints live as
    /// long as the server, and nothing else keeps the hub.
    var hub: BroadcastHub?
    private var subscribers = SlottedList<Connection>(slot: \.endpointSlot)
    /// Compresses outgoing publications from this loop (server_no_context_takeover: one
    /// deflater serves every message, reset between them).
    private lazy var deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: true)
    /// This loop's publishers whose reading is held until no subscriber is behind.
    private var heldPublishers: [Connection] = []

    init(maxMessageSize: Int) { self.maxMessageSize = maxMessageSize }

    func connectionOpened(_ connection: Connection, request: WebSocketHandshake.Request) {
        subscribers.append(connection)
        if connection.acceptsSharedDeflatedFrames {
            hub?.compressedSubscribers.add(1, ordering: .relaxed)
        }
    }

    func connectionClosed(_ connection: Connection) {
        guard subscribers.remove(connection) else { return }
        if connection.acceptsSharedDeflatedFrames {
            hub?.compressedSubscribers.subtract(1, ordering: .relaxed)
        }
        if connection.isBehind { hub?.readerCaughtUp() }
        heldPublishers.removeAll { $0 === connection }
    }

    func connectionBehindChanged(_ connection: Connection) {
        guard let hub else { return }
        if connection.isBehind {
            hub.readersBehind.add(1, ordering: .relaxed)
        } else {
            hub.readerCaughtUp()
        }
    }

    /// Every subscriber caught up: held publishers are read again. A reader that fell behind
    /// since will hold them again at their next message.
    func resumeHeldPublishers() {
        let held = heldPublishers
        heldPublishers = []
        for publisher in held { publisher.resumeReading() }
    }

    func received(_ opcode: WebSocketOpcode, _ payload: [UInt8], from connection: Connection) {
        guard let hub else { return }
        let wantsDeflate = hub.compressedSubscribers.load(ordering: .relaxed) > 0
        let frame = SharedFrame(opcode: opcode, payload: payload, deflater: wantsDeflate ? deflater : nil)
        hub.publish(frame, from: connection.context.loop.index)
        // Checked after the publish, on this thread: a catch-up that brings the count to zero
        // later queues `resumeHeldPublishers` behind this, so a hold is never missed.
        if hub.readersBehind.load(ordering: .relaxed) > 0, !heldPublishers.contains(where: { $0 === connection }) {
            heldPublishers.append(connection)
            connection.holdReading()
        }
    }

    func deliver(_ frame: SharedFrame) {
        for subscriber in subscribers.elements {
            subscriber.sendShared(frame)
        }
    }
}
