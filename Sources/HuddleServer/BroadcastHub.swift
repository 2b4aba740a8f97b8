import HuddleIO
import HuddleWebSocket
import Synchronization

/// `/broadcast` across every I/O loop: a message received on one loop is encoded once, handed
/// to each other loop as the same immutable bytes, and each loop copies them into its own
/// subscribers' write queues — which leave in one write per socket at the end of the loop turn.
final class BroadcastHub: Sendable {
    private let endpoints: [BroadcastEndpoint]
    private let loops: [EventLoop]
    /// Subscribers (on any loop) that can take the shared compressed frame; while zero, no
    /// publication pays for compression.
    let compressedSubscribers = Atomic<Int>(0)

    init(loops: [EventLoop], maxMessageSize: Int) {
        self.loops = loops
        self.endpoints = loops.map { _ in BroadcastEndpoint(maxMessageSize: maxMessageSize) }
        for endpoint in endpoints { endpoint.hub = self }
    }

    func endpoint(forLoop index: Int) -> BroadcastEndpoint { endpoints[index] }

    /// Called on loop `origin`'s thread.
    func publish(_ frame: SharedFrame, from origin: Int) {
        for index in loops.indices where index != origin {
            let endpoint = endpoints[index]
            loops[index].execute { endpoint.deliver(frame) }
        }
        endpoints[origin].deliver(frame)
    }
}

/// One loop's share of `/broadcast`: its subscribers, touched only on that loop's thread.
final class BroadcastEndpoint: WebSocketEndpoint, @unchecked Sendable {
    let maxMessageSize: Int
    /// Set once by the hub before any loop runs. Strong on purpose: hub and endpoints live as
    /// long as the server, and nothing else keeps the hub.
    nonisolated(unsafe) var hub: BroadcastHub?
    private var subscribers = SlottedList<Connection>(slot: \.endpointSlot)
    /// Compresses outgoing publications from this loop (server_no_context_takeover: one
    /// deflater serves every message, reset between them).
    private lazy var deflater = PerMessageDeflater(windowBits: 15, noContextTakeover: true)

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
    }

    func received(_ opcode: WebSocketOpcode, _ payload: [UInt8], from connection: Connection) {
        guard let hub else { return }
        let wantsDeflate = hub.compressedSubscribers.load(ordering: .relaxed) > 0
        let frame = SharedFrame(opcode: opcode, payload: payload, deflater: wantsDeflate ? deflater : nil)
        hub.publish(frame, from: connection.context.loop.index)
    }

    func deliver(_ frame: SharedFrame) {
        for subscriber in subscribers.elements {
            subscriber.sendShared(frame)
        }
    }
}
