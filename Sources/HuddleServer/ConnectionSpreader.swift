import HuddleIO
import Synchronization

/// Hands each accepted connection to the next loop in turn, whichever loop accepted it.
///
/// Every loop accepts from the port's one socket, and EPOLLEXCLUSIVE wakes the first loop idle
/// in epoll_wait: on a quiet server that is always the same loop, which would end up with every
/// long-lived WebSocket. Round-robin spreads them evenly, as SO_REUSEPORT's hash did; a
/// connection placed on another loop crosses once, before any byte of it is read.
final class ConnectionSpreader: Sendable {
    private let contexts: [LoopBound<LoopContext>]
    private let next = Atomic<Int>(0)

    init(_ contexts: [LoopContext]) {
        self.contexts = contexts.map { LoopBound($0, loop: $0.loop) }
    }

    /// Called on `acceptor`'s loop with a connection it accepted.
    func place(fd: Int32, peer: String, tls: Bool, acceptedOn acceptor: LoopContext) {
        let target = contexts[next.add(1, ordering: .relaxed).newValue % contexts.count]
        if target.loop === acceptor.loop {
            target.value.accepted(fd: fd, peer: peer, tls: tls)
        } else {
            target.execute { $0.accepted(fd: fd, peer: peer, tls: tls) }
        }
    }
}
