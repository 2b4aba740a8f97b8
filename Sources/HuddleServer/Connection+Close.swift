import HuddleWebSocket
import Logging

/// The WebSocket's end, from our side or the peer's: messages stop, the close frame goes out,
/// the endpoint forgets the connection, and our side is shut once everything is written.
extension Connection {
    /// Starts the close handshake from our side.
    func close(_ code: WebSocketCloseCode, reason: String) {
        guard case .open(let session) = phase else { return }
        session.enqueueFrame(.close, WebSocketFrameWriter.closePayload(code: code, reason: reason))
        enterClosing(session, shutdownAfterFlush: false)
    }

    /// Fails the connection (RFC 6455 §7.1.7): send the close frame, don't wait for an answer.
    func fail(_ error: WebSocketError) {
        context.logger.info("closing connection", metadata: ["peer": "\(peer)", "code": "\(error.closeCode.rawValue)", "reason": "\(error.reason)"])
        guard let session else { return }
        if isOpen { session.enqueueFrame(.close, WebSocketFrameWriter.closePayload(code: error.closeCode, reason: error.reason)) }
        enterClosing(session, shutdownAfterFlush: true)
        session.stopParsing()
    }

    /// The peer's close frame: echo its status code (RFC 6455 §5.5.1) if the close is the
    /// peer's, then shut down once everything is written.
    func closeFrameReceived(code: WebSocketCloseCode?) {
        switch phase {
        case .open(let session):
            session.enqueueFrame(.close, code.map { WebSocketFrameWriter.closePayload(code: $0, reason: "") } ?? [])
            enterClosing(session, shutdownAfterFlush: true)
        case .closing(var closing):
            closing.shutdownAfterFlush = true
            phase = .closing(closing)
            if queuedOutputBytes == 0 { shutDownOurSide() }
        default:
            break
        }
    }

    /// Closed as a slow consumer (`WriteDeadline.slowConsumer`).
    func closingAfterSlowConsumer() {
        guard case .closing(var closing) = phase else { return }
        closing.extendedByProgress = .slowConsumer
        phase = .closing(closing)
        deadline = context.loop.now + slowConsumerClosingTimeout
    }

    var slowConsumerClosingTimeout: Int64 {
        max(Self.closingTimeout, Int64(context.configuration.slowReaderTimeoutMilliseconds))
    }

    private func enterClosing(_ session: WebSocketSession, shutdownAfterFlush: Bool) {
        var extendedByProgress: WriteDeadline?
        if case .closing(let closing) = phase { extendedByProgress = closing.extendedByProgress }
        phase = .closing(Closing(session: session, shutdownAfterFlush: shutdownAfterFlush, extendedByProgress: extendedByProgress))
        // A held publisher reads again: the peer's close frame is what the close waits for.
        stopHoldingReading()
        deadline = context.loop.now + Self.closingTimeout
        session.detach()
    }
}
