import Glibc

/// One connected non-blocking socket, plain or through TLS, with its outbound queue: the bytes
/// half of every connection (the server's, the client's, the push webhook's). Owners keep
/// their protocol state and ask the transport to read, write and watch the socket; what TLS
/// makes hard — a read that waits for writability, a write that waits for readability, a
/// handshake that waits for either — is handled here once.
///
/// Loop-bound: the owner registers the fd with `loop` and calls everything on the loop's thread.
///
/// The variables are `@exclusivity(unchecked)`: they are read and written several times per
/// message (queue size, interest, flush), each a run-time exclusivity check of ~80 instructions
/// that the optimizer cannot drop for a class used from other modules. No access to them
/// overlaps another: none is passed inout to a call that could reach the transport
/// (`appendToQueue` moves the queue out first), and one thread touches them.
public final class Transport {
    // Stored in this order so the object stays 72 bytes (an 80-byte heap block): the 4- and
    // 1-byte fields share words (Swift lays out a class's fields in declaration order). Every
    // idle connection holds one.
    public let fd: Int32
    /// The epoll mask registered for `fd`.
    @exclusivity(unchecked) public private(set) var interest: UInt32
    /// Queue capacity kept after a flush (or by the sweep); more is released so idle connections stay small.
    private let retainedQueueCapacity: Int32
    /// Whether the owner wants the socket read (a held publisher, a request being sent: no).
    /// Takes effect at the next `updateInterest()`.
    @exclusivity(unchecked) public var wantsInput = true
    /// `handshake()` was called and has not finished: the handshake alone decides the mask.
    @exclusivity(unchecked) private var handshaking = false
    @exclusivity(unchecked) public private(set) var isClosed = false
    /// Whether more than `retainedQueueCapacity` is released as soon as the queue drains, or
    /// only by `releaseSpareCapacity()` (the owner's periodic sweep).
    private let releasesCapacityWhenDrained: Bool
    public let loop: EventLoop
    private let tls: TLSStream?
    /// Bytes written to the socket so far (a position in the outbound stream).
    @exclusivity(unchecked) public private(set) var writtenBytes = 0
    @exclusivity(unchecked) private var queue: [UInt8] = []
    @exclusivity(unchecked) private var queueOffset = 0

    /// - Parameters:
    ///   - registeredEvents: the mask `fd` is registered with in `loop` (the owner registers it).
    ///   - releasesCapacityWhenDrained: false for an owner that calls `releaseSpareCapacity()`
    ///     periodically: a queue that fills and drains turn after turn (a subscriber of a busy
    ///     room) then keeps its buffer between turns instead of freeing it and growing it again,
    ///     a copy of everything queued at each doubling.
    public init(
        fd: Int32, tls: TLSStream?, loop: EventLoop, registeredEvents: UInt32, retainedQueueCapacity: Int = 0,
        releasesCapacityWhenDrained: Bool = true
    ) {
        self.fd = fd
        self.tls = tls
        self.loop = loop
        self.interest = registeredEvents
        self.retainedQueueCapacity = Int32(clamping: retainedQueueCapacity)
        self.releasesCapacityWhenDrained = releasesCapacityWhenDrained
    }

    public var isTLS: Bool { tls != nil }

    // MARK: The queue

    /// Bytes queued and not yet written.
    public var queuedByteCount: Int { queue.count - queueOffset }

    public func enqueue(_ bytes: [UInt8]) {
        queue.append(contentsOf: bytes)
    }

    /// Copies `bytes` (a frame built in a read buffer) to the end of the queue.
    public func enqueue(_ bytes: UnsafeRawBufferPointer) {
        queue.append(contentsOf: bytes)
    }

    /// Appends in place (frame writers encode straight into the queue). The queue is moved out
    /// while `body` runs (no copy: its buffer stays uniquely referenced), so no access to the
    /// unchecked property spans a call that could reach it again.
    public func appendToQueue(_ body: (inout [UInt8]) -> Void) {
        var bytes: [UInt8] = []
        swap(&bytes, &queue)
        body(&bytes)
        swap(&bytes, &queue)
    }

    /// Drops queued bytes that have not started to leave: `cut` gets the queue and where its
    /// unsent part starts, and answers the index from which to drop (at least that start).
    public func dropUnsent(_ cut: (_ queue: [UInt8], _ unsentStart: Int) -> Int) {
        let from = max(cut(queue, queueOffset), queueOffset)
        guard from < queue.count else { return }
        queue.removeSubrange(from...)
    }

    /// Frees the empty queue's storage (an idle connection keeps no buffer); the next message
    /// allocates again. Nothing happens while bytes are queued.
    public func releaseQueueStorage() {
        releaseQueueStorage(over: 0)
    }

    /// Frees the queue's buffer if nothing is queued and it is over the retained capacity: the
    /// owner's periodic sweep, for a transport that keeps its buffer between busy turns.
    public func releaseSpareCapacity() {
        releaseQueueStorage(over: Int(retainedQueueCapacity))
    }

    private func releaseQueueStorage(over capacity: Int) {
        guard queueOffset == queue.count, queue.capacity > capacity else { return }
        queue = []
        queueOffset = 0
    }

    /// Forgets everything queued (the connection is over).
    public func discardQueue() {
        queue = []
        queueOffset = 0
    }

    // MARK: Handshake

    public enum HandshakeProgress: Equatable {
        case done
        case inProgress
        case endOfStream
        case failed(String)
    }

    /// Advances the TLS handshake (plain sockets have none: `.done`). In progress, the fd is
    /// watched for whichever readiness the handshake waits for; call again when it comes.
    public func handshake() -> HandshakeProgress {
        guard let tls, !isClosed else { return .done }
        switch tls.handshake() {
        case .bytes:
            handshaking = false
            return .done
        case .wouldBlock:
            handshaking = true
            updateInterest()
            return .inProgress
        case .endOfStream:
            return .endOfStream
        case .failed(let reason):
            return .failed(reason)
        }
    }

    // MARK: Readiness

    /// Which calls an epoll event lets progress. A read is retried on writability when TLS
    /// blocked it on writing (else nothing would retry it while the queue is empty, and
    /// level-triggered writability would wake the loop forever); a write on readability when
    /// TLS blocked it on reading.
    public func retries(for events: UInt32) -> (read: Bool, write: Bool) {
        let readable = events & (EventLoop.readable | EventLoop.hangup | EventLoop.error) != 0
        let writable = events & EventLoop.writable != 0
        let readWaits = tls?.readWaitsForWritable == true
        let writeWaits = tls?.writeWaitsForReadable == true
        return (
            read: readable || (writable && readWaits),
            write: writeWaits ? readable || writable : writable
        )
    }

    /// Brings the epoll mask in line with what waits: input (when wanted), queued output, and
    /// whichever readiness TLS blocked a call on.
    public func updateInterest() {
        guard !isClosed else { return }
        var events: UInt32 = 0
        if handshaking, let tls {
            events = tls.handshakeWaitsForWritable ? EventLoop.writable : EventLoop.readable
        } else {
            // A call blocked on the other readiness is retried on that one only: its own
            // readiness (input still in the kernel, room in the send buffer) cannot help it.
            let readWaits = tls?.readWaitsForWritable == true
            let writeWaits = tls?.writeWaitsForReadable == true
            if (wantsInput && !readWaits) || writeWaits { events |= EventLoop.readable }
            if (queuedByteCount > 0 && !writeWaits) || (wantsInput && readWaits) { events |= EventLoop.writable }
        }
        if events != interest {
            interest = events
            loop.modify(fd, events: events)
        }
    }

    // MARK: Reading

    public enum ReadEnd: Equatable {
        /// Nothing more to read now (the fd is watched again), or the per-event budget is spent.
        case caughtUp
        /// `deliver` asked to stop.
        case stopped
        case endOfStream
        case failed(String)
    }

    /// Reads into the loop's shared buffer and hands each chunk to `deliver`, which answers
    /// whether to go on. Plain sockets: a few reads per event is plenty (epoll is level-triggered
    /// and reports the rest). TLS drains until "want read": OpenSSL may hold decrypted bytes
    /// that the socket's readiness no longer announces.
    public func read(_ deliver: (UnsafeRawBufferPointer) -> Bool) -> ReadEnd {
        readInPlace { deliver(UnsafeRawBufferPointer($0)) }
    }

    /// `read(_:)`, handing over the loop's scratch buffer itself: `deliver` may change the
    /// bytes (unmask a frame, write a header over the one it read) — nothing reads them after it.
    public func readInPlace(_ deliver: (UnsafeMutableRawBufferPointer) -> Bool) -> ReadEnd {
        let buffer = loop.readBuffer
        var budget = tls == nil ? 4 : Int.max
        while budget > 0, !isClosed {
            budget -= 1
            switch tls?.read(into: buffer) ?? Socket.read(fd, into: buffer) {
            case .bytes(let count):
                guard deliver(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])) else { return .stopped }
                if tls == nil && count < buffer.count { return .caughtUp }
            case .wouldBlock:
                updateInterest()
                return .caughtUp
            case .endOfStream:
                return .endOfStream
            case .failed(let reason):
                return .failed(reason)
            }
        }
        return isClosed ? .stopped : .caughtUp
    }

    // MARK: Writing

    public enum FlushEnd: Equatable {
        /// Everything queued was written.
        case drained
        /// The socket took what it could; the fd is watched for the readiness the rest needs.
        case pending
        case endOfStream
        case failed(String)
    }

    /// Writes as much of the queue as the socket takes; `wrote` is how many bytes left.
    public func flush() -> (end: FlushEnd, wrote: Int) {
        guard !isClosed else { return (.drained, 0) }
        var wrote = 0
        while queueOffset < queue.count {
            let result = queue.withUnsafeBytes { bytes -> IOResult in
                let pending = UnsafeRawBufferPointer(rebasing: bytes[queueOffset...])
                return tls?.write(from: pending) ?? Socket.write(fd, from: pending)
            }
            switch result {
            case .bytes(let count):
                queueOffset += count
                writtenBytes += count
                wrote += count
            case .wouldBlock:
                updateInterest()
                return (.pending, wrote)
            case .endOfStream:
                return (.endOfStream, wrote)
            case .failed(let reason):
                return (.failed(reason), wrote)
            }
        }
        if releasesCapacityWhenDrained && queue.capacity > Int(retainedQueueCapacity) {
            queue = []
        } else {
            queue.removeAll(keepingCapacity: true)
        }
        queueOffset = 0
        updateInterest()
        return (.drained, wrote)
    }

    // MARK: The end

    /// Shuts our sending side (TLS close_notify first, best effort): the peer reads everything
    /// sent, then EOF.
    public func shutdownOutput() {
        guard !isClosed else { return }
        tls?.shutdown()
        Socket.shutdownWrite(fd)
    }

    /// Unregisters and closes the fd; the queue is dropped. Idempotent. `notifyingPeer`: a
    /// TLS close_notify goes first (best effort), so the peer can tell an end from a cut.
    public func close(notifyingPeer: Bool = false) {
        guard !isClosed else { return }
        isClosed = true
        if notifyingPeer { tls?.shutdown() }
        loop.unregister(fd)
        Glibc.close(fd)
        discardQueue()
    }
}
