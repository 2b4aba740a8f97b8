import HuddleIO
import HuddleWebSocket
import Logging

/// A connection's HTTP request: the head (routed by `HTTPRoute`), an HTTP API or photo body,
/// the one response, or the WebSocket upgrade.
extension Connection {
    /// `bytes` is the loop's read buffer (see `consume`).
    func consumeHead(_ bytes: UnsafeMutableRawBufferPointer, parser: HTTPHeadParser) {
        var parser = parser
        let parsed: (head: HTTPRequestHead, consumed: Int)?
        do {
            parsed = try parser.parseRequest(UnsafeRawBufferPointer(bytes))
        } catch {
            context.logger.info("bad HTTP request", metadata: ["peer": "\(peer)", "status": "\(error.status)", "reason": "\(error.reason)"])
            respond(.text(error.status, error.reason))
            return
        }
        guard let (head, consumed) = parsed else {
            phase = .httpHead(parser)
            return
        }
        let rest = UnsafeMutableRawBufferPointer(rebasing: bytes[consumed...])
        switch HTTPRoute.of(head, peer: peer, context: context) {
        case .reply(let reply):
            respond(reply)
        case .api(let api, let length):
            let request = PendingHTTPRequest(head: head, expectedLength: length, api: api)
            phase = .httpBody(.api(request))
            consumeBody(UnsafeRawBufferPointer(rest), request)
        case .photo(let photos):
            beginPhotoRequest(head, rest: UnsafeRawBufferPointer(rest), photos: photos)
        case .export(let exports):
            beginExport(head, exports: exports)
        case .upgrade(let endpoint, let request, let subprotocol):
            let session = WebSocketSession(connection: self, endpoint: endpoint, request: request, subprotocol: subprotocol)
            context.markDirty(self)
            phase = .open(session)
            context.metrics.loop(context.loop.index).webSocketsOpened.add(1, ordering: .relaxed)
            endpoint.connectionOpened(self, request: request)
            // Frames the client sent right behind its upgrade request came in the same read.
            if case .open(let session) = phase, !rest.isEmpty { session.read(rest, from: self) }
        }
    }

    func consumeBody(_ bytes: UnsafeRawBufferPointer, _ request: PendingHTTPRequest) {
        guard !request.dispatched else { return }
        let wanted = request.expectedLength - request.body.count
        request.body.append(contentsOf: bytes.prefix(wanted))
        guard request.body.count == request.expectedLength else { return }
        request.dispatched = true
        request.api.handle(request.head, body: request.body, from: self)
    }

    /// Completes an HTTP API request (possibly a loop turn or more after it arrived).
    func respondJSON(status: Int, body: [UInt8]) {
        guard case .httpBody = phase else { return }
        respond(HTTPReply(status: status, contentType: "application/json", body: body))
    }

    // MARK: Photos

    /// The photo endpoints answer from the head what they can (method, token, size); anything
    /// else becomes a transfer that reads the body here and answers later.
    private func beginPhotoRequest(_ head: HTTPRequestHead, rest: UnsafeRawBufferPointer, photos: PhotoAPI) {
        switch photos.begin(head, on: self) {
        case .respond(let response):
            respond(HTTPReply(status: response.status, headers: response.headers, contentType: response.contentType, body: response.body))
        case .transfer(let transfer):
            phase = .httpBody(.photo(transfer))
            // The body's deadline is the transfer's own (`PhotoTransfer.bodyDeadline`), fixed
            // when the head arrived: a client trickling bytes cannot push it back.
            if !rest.isEmpty { transfer.receive(rest) }
        }
    }

    /// The photo request being served, if any.
    private var photoTransfer: PhotoTransfer? {
        if case .httpBody(.photo(let transfer)) = phase { transfer } else { nil }
    }

    /// The core's answer to this connection's photo or export request (through the endpoint).
    func photoAccessDecided(_ outcome: PhotoAccessOutcome) {
        switch phase {
        case .httpBody(.photo(let transfer)): transfer.decided(outcome)
        case .httpBody(.export(let transfer)): transfer.decided(outcome)
        default: break
        }
    }

    /// `100 Continue` (RFC 9110 §10.1.1) for a client that waits for it before sending the
    /// body: the upload is allowed, so the bytes are worth sending.
    func continuePhotoUpload(_ transfer: PhotoTransfer) {
        guard photoTransfer === transfer else { return }
        transport.enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        context.markDirty(self)
    }

    /// Completes the photo request `transfer`; nothing if the connection is no longer serving it.
    func finishPhotoRequest(_ transfer: PhotoTransfer, _ response: PhotoResponse) {
        guard photoTransfer === transfer else { return }
        respond(HTTPReply(status: response.status, headers: response.headers, contentType: response.contentType, body: response.body))
        guard case .closing(var closing) = phase else { return }
        closing.extendedByProgress = .photoResponse
        phase = .closing(closing)
        deadline = context.loop.now + Int64(context.configuration.idleTimeoutMilliseconds)
    }

    // MARK: Export

    private func beginExport(_ head: HTTPRequestHead, exports: ExportAPI) {
        switch exports.begin(head, on: self) {
        case .respond(let response):
            respond(HTTPReply(status: response.status, headers: response.headers, contentType: response.contentType, body: response.body))
        case .transfer(let transfer):
            phase = .httpBody(.export(transfer))
        }
    }

    /// The export being served, if any.
    private var exportTransfer: ExportTransfer? {
        if case .httpBody(.export(let transfer)) = phase { transfer } else { nil }
    }

    /// Queues bytes of the archive `transfer` streams (its head first).
    func queueExportBytes(_ transfer: ExportTransfer, _ bytes: [UInt8]) {
        guard exportTransfer === transfer else { return }
        transport.enqueue(bytes)
        context.markDirty(self)
    }

    /// The export was refused or failed before its archive began: a complete response.
    func finishExportRequest(_ transfer: ExportTransfer, _ response: PhotoResponse) {
        guard exportTransfer === transfer else { return }
        respond(HTTPReply(status: response.status, headers: response.headers, contentType: response.contentType, body: response.body))
    }

    /// The archive's last byte left: the response is complete.
    func endExport(_ transfer: ExportTransfer) {
        guard exportTransfer === transfer else { return }
        shutDownOurSide()
    }

    /// The archive cannot be completed: closing short of its Content-Length tells the client
    /// the download failed.
    func abortExport(_ transfer: ExportTransfer) {
        guard exportTransfer === transfer else { return }
        abort()
    }

    // MARK: The response

    /// Sends a complete HTTP response and closes once it is written.
    func respond(_ reply: HTTPReply) {
        transport.enqueue(reply.encoded)
        context.markDirty(self)
        phase = .closing(Closing(session: nil, shutdownAfterFlush: true))
        deadline = context.loop.now + Self.closingTimeout
    }

    /// An HTTP request whose whole body was read and whose response is being made.
    var awaitsResponse: Bool {
        switch phase {
        case .httpBody(.photo(let transfer)): !transfer.isReceivingBody
        case .httpBody(.export(let transfer)): transfer.isUnderWay
        case .httpBody(.api(let request)): request.dispatched
        default: false
        }
    }

    /// A body that never completes holds the connection: same deadline as the head. A photo
    /// body has its transfer's own; an export archive's reader must take bytes within the idle timeout.
    func checkBodyDeadline(_ body: HTTPRequestBody, now: Int64) {
        switch body {
        case .export(let transfer):
            transfer.checkDeadline(now: now)
        case .photo(let transfer):
            if now >= transfer.bodyDeadline, transfer.isReceivingBody {
                context.logger.info("photo body timeout", metadata: ["peer": "\(peer)"])
                transfer.timedOut()
            }
        case .api(let request):
            if now >= deadline, !request.dispatched {
                context.logger.info("HTTP body timeout", metadata: ["peer": "\(peer)"])
                respond(.text(408, "request body timeout"))
            }
        }
    }
}

/// An HTTP API request whose body is still arriving, or whose response is still being computed.
final class PendingHTTPRequest {
    let head: HTTPRequestHead
    let expectedLength: Int
    let api: HTTPAPI
    var body: [UInt8] = []
    var dispatched = false

    init(head: HTTPRequestHead, expectedLength: Int, api: HTTPAPI) {
        self.head = head
        self.expectedLength = expectedLength
        self.api = api
    }
}
