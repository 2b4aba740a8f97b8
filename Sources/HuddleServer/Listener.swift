import Glibc
import HuddleIO

/// The port's listening socket as one loop sees it: every loop has its own descriptor of the one
/// socket (`Server.listenEverywhere`) and accepts from it; the spreader decides which loop
/// serves each connection.
final class Listener: EventHandler {
    /// Every loop waits on the same socket: a new connection wakes one of the loops waiting in
    /// epoll_wait, not all of them, and a loop busy serving is not waiting, so idle loops take
    /// the new connections. Another loop may still win the accept (nothing to accept is fine).
    static let events = EventLoop.readable | EventLoop.exclusive

    private let fd: Int32
    private let tls: Bool
    private unowned let context: LoopContext
    private let spreader: ConnectionSpreader
    private var paused = false

    /// Accepts per readiness event: enough to drain a burst, few enough to stay fair to
    /// connections already served by this loop.
    private static let acceptsPerEvent = 64

    init(fd: Int32, tls: Bool, context: LoopContext, spreader: ConnectionSpreader) {
        self.fd = fd
        self.tls = tls
        self.context = context
        self.spreader = spreader
    }

    override func handleEvents(_ events: UInt32) {
        for _ in 0..<Self.acceptsPerEvent {
            do {
                guard let (clientFD, peer) = try Socket.accept(fd) else { return }
                spreader.place(fd: clientFD, peer: peer, tls: tls, acceptedOn: context)
            } catch let error as SystemError where error.errno == EMFILE || error.errno == ENFILE {
                // Out of descriptors: the pending connection stays in the backlog and the socket
                // stays readable, so stop watching it for a moment instead of spinning.
                context.logger.warning("out of file descriptors; pausing accepts for 100 ms", metadata: ["error": "\(error)"])
                pause()
                return
            } catch {
                context.logger.warning("accept failed", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    private func pause() {
        guard !paused else { return }
        paused = true
        context.loop.unregister(fd)
        context.loop.schedule(after: 100) { [weak self] in
            guard let self, self.paused else { return }
            self.paused = false
            try? self.context.loop.register(self.fd, events: Self.events, handler: self)
        }
    }

    func close() {
        if !paused { context.loop.unregister(fd) }
        paused = false
        Glibc.close(fd)
    }
}
