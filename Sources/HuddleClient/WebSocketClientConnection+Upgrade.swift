import HuddleIO
import HuddleWebSocket

/// The opening handshake (RFC 6455 §4.1): our upgrade request, then the server's answer checked
/// (status, accept key, subprotocol, permessage-deflate) before any frame is read.
extension WebSocketClientConnection {
    func beginUpgrade() {
        state = .upgrading
        let key = WebSocketHandshake.makeKey()
        handshakeKey = key
        responseParser = HTTPHeadParser()
        enqueue(WebSocketHandshake.clientRequest(
            host: url.hostHeader, path: url.target, key: key,
            extensionOffer: options.compression?.headerValue,
            subprotocols: options.subprotocols, extraHeaders: options.headers))
        transport?.updateInterest()
    }

    func consumeHandshake(_ bytes: UnsafeRawBufferPointer) {
        let parsed: (head: HTTPResponseHead, consumed: Int)?
        do {
            parsed = try responseParser!.parseResponse(bytes)
        } catch {
            finish(code: nil, reason: "invalid HTTP response to the upgrade: \(error.reason)", clean: false)
            return
        }
        guard let (head, consumed) = parsed else { return }
        responseParser = nil
        handshakeStatus = head.status
        let key = handshakeKey ?? ""
        handshakeKey = nil

        let negotiated: (extensions: [String], subprotocol: String?)
        do {
            negotiated = try WebSocketHandshake.validateServerResponse(head, key: key, offeredSubprotocols: options.subprotocols)
        } catch {
            let reason = error.status == 101
                ? "invalid upgrade response: \(error.reason)"
                : "HTTP \(head.status)\(head.reason.isEmpty ? "" : " \(head.reason)"): \(error.reason)"
            finish(code: nil, reason: reason, clean: false)
            return
        }
        var inflater: (any WebSocketMessageInflater)?
        do {
            let answer = head.headers.values("Sec-WebSocket-Extensions")
            if let offer = options.compression {
                compression = try PerMessageDeflateNegotiation.acceptServerResponse(headerValues: answer, offer: offer)
            } else if !negotiated.extensions.isEmpty {
                throw WebSocketError(.protocolError, "server accepted extensions that were not offered")
            }
        } catch {
            finish(code: nil, reason: "invalid upgrade response: \(error)", clean: false)
            return
        }
        if let compression {
            inflater = compression.serverNoContextTakeover
                ? context!.sharedInflater
                : PerMessageInflater(windowBits: compression.serverMaxWindowBits, noContextTakeover: false)
        }
        reader = WebSocketMessageReader(role: .client, maxMessageSize: options.maxMessageSize, inflater: inflater)
        state = .open
        clearDeadline()
        delegate?.webSocketDidOpen(self, subprotocol: negotiated.subprotocol, extensions: negotiated.extensions)
        // Frames the server sent right behind its 101 came in the same read.
        if consumed < bytes.count, state == .open || state == .closing {
            consumeFrames(UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
        }
    }
}
