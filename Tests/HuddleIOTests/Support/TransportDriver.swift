import HuddleIO

/// The smallest owner of a `Transport`, driven the way the real ones are (the server's and
/// the client's connections): handshake first when asked, then every event retries what the
/// transport says it lets progress. Loop thread only.
final class TransportDriver: EventHandler {
    let transport: Transport
    private var handshakeDone: Bool
    private(set) var received: [UInt8] = []
    private(set) var ended: Transport.ReadEnd?
    private(set) var flushFailure: Transport.FlushEnd?

    init(_ transport: Transport, handshakeFirst: Bool) {
        self.transport = transport
        handshakeDone = !handshakeFirst
    }

    override func handleEvents(_ events: UInt32) {
        if !handshakeDone {
            switch transport.handshake() {
            case .done: handshakeDone = true
            case .inProgress: return
            case .endOfStream, .failed: ended = .endOfStream
            }
            return
        }
        let retries = transport.retries(for: events)
        if retries.read {
            let end = transport.read { bytes in
                received += bytes
                return true
            }
            if end != .caughtUp { ended = end }
        }
        if retries.write { flush() }
    }

    /// Queues `bytes` and writes what the socket takes now, as a connection does at the end of
    /// the loop turn it queued them in.
    func send(_ bytes: [UInt8]) -> Transport.FlushEnd {
        transport.enqueue(bytes)
        return flush()
    }

    @discardableResult
    func flush() -> Transport.FlushEnd {
        let end = transport.flush().end
        if end != .drained && end != .pending { flushFailure = end }
        return end
    }

    var isHandshakeDone: Bool { handshakeDone }
}

extension TransportDriver {
    /// A transport on `fd`, registered with the running loop (readable) and driven by a new driver.
    static func registered(fd: Int32, tls: TLSStream?, on running: RunningLoop, handshakeFirst: Bool) -> TransportDriver {
        running.sync {
            let transport = Transport(fd: fd, tls: tls, loop: running.loop, registeredEvents: EventLoop.readable)
            let driver = TransportDriver(transport, handshakeFirst: handshakeFirst)
            try! running.loop.register(fd, events: EventLoop.readable, handler: driver)
            return driver
        }
    }
}
