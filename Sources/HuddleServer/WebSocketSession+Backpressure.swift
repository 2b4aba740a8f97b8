import HuddleWebSocket
import Logging

/// The reader's side of `BackpressureRule`: a memory ceiling on the queue, "behind" while over
/// the threshold (publishers to it wait), "stalled" when its socket takes nothing, and the
/// slow-reader close.
extension WebSocketSession {
    /// The memory bound: a new message is admitted while the queue holds less than the
    /// ceiling, so memory per connection stays under it plus one message. Given the connection
    /// and its context the caller has already read (see `connection`).
    func admitOutput(_ connection: Connection, _ context: LoopContext) -> Bool {
        let maxOutboundBytes = context.configuration.maxOutboundBytes
        guard connection.queuedOutputBytes >= maxOutboundBytes else { return true }
        closeSlowConsumer(.queueLimit, reason: "outbound queue over \(maxOutboundBytes) bytes")
        return false
    }

    /// Closes a reader that fell too far behind with 1008: the queued frames that have not
    /// started to leave are dropped (their memory freed at once) and the close frame follows
    /// the frame in flight, so the reader learns why as soon as it catches up with its socket.
    func closeSlowConsumer(_ cause: SlowConsumerCause, reason: String) {
        let context = connection.context
        context.logger.warning("closing slow consumer", metadata: ["peer": "\(connection.peer)", "queued": "\(connection.queuedOutputBytes)", "reason": "\(reason)"])
        context.metrics.loop(context.loop.index).countSlowConsumerClose(cause)
        let framesStart = self.framesStart
        connection.transport.dropUnsent { queue, unsentStart in
            WebSocketFrameWriter.endOfFrame(covering: unsentStart, in: queue, from: framesStart)
        }
        connection.close(.policyViolation, reason: "slow consumer: \(reason)")
        connection.closingAfterSlowConsumer()
    }

    /// Tells the endpoint (which holds publishers back) when this reader falls behind or catches up.
    func setBehind(_ behind: Bool) {
        guard behind != isBehind, connection.isOpen, let endpoint else { return }
        isBehind = behind
        let context = connection.context
        context.metrics.loop(context.loop.index).readersBehind.add(behind ? 1 : -1, ordering: .relaxed)
        endpoint.connectionBehindChanged(connection)
    }

    /// After a flush: a reader back under the threshold no longer holds publishers.
    /// `connection` is this session's (see `read`).
    func wroteSome(progressed: Bool, on connection: Connection) {
        if progressed { isStalled = false }
        let queued = connection.queuedOutputBytes
        let backpressure = connection.context.backpressure
        if isBehind, queued <= backpressure.caughtUpBytes {
            setBehind(false)
        } else if !isBehind, !isStalled, queued > backpressure.behindBytes {
            setBehind(true)
        }
    }

    /// The slow-reader rule: bytes queued must leave within the timeout, however much is
    /// queued; and a reader whose socket takes nothing for the stall time no longer holds
    /// publishers back. True when the connection was closed.
    func checkDrain(now: Int64) -> Bool {
        let writtenBytes = connection.transport.writtenBytes
        if let mark = drainMark, writtenBytes >= mark.end { drainMark = nil }
        let queued = connection.queuedOutputBytes
        guard queued > 0 else { return false }
        guard let mark = drainMark else {
            drainMark = (writtenBytes + queued, now)
            return false
        }
        let context = connection.context
        let waited = now - mark.since
        if waited >= Int64(context.configuration.slowReaderTimeoutMilliseconds) {
            closeSlowConsumer(.queueAge, reason: "bytes queued for \(waited / 1000) s were not read")
            return true
        }
        if isBehind, now - connection.lastWriteProgress >= context.backpressure.stallMilliseconds {
            isStalled = true
            setBehind(false)
        }
        return false
    }
}
