import HuddleWebSocket
import Logging

/// A complete HTTP response the connection sends before closing.
struct HTTPReply {
    var status: Int
    var headers: [(String, String)] = []
    var contentType: String
    var body: [UInt8]
    /// A HEAD request: the headers (Content-Length included) without the body.
    var omitBody = false

    /// A plain-text reply: the reason a client or an operator reads.
    static func text(_ status: Int, headers: [(String, String)] = [], _ text: String, omitBody: Bool = false) -> HTTPReply {
        HTTPReply(status: status, headers: headers, contentType: "text/plain; charset=utf-8", body: Array((text + "\n").utf8), omitBody: omitBody)
    }

    /// The bytes on the wire (`Connection: close`: one request per connection).
    var encoded: [UInt8] {
        var allHeaders = headers
        allHeaders.append(("Content-Type", contentType))
        var response = HTTPResponseWriter.response(status: status, headers: allHeaders, body: body, close: true)
        if omitBody { response.removeLast(body.count) }
        return response
    }
}

/// Where a request head goes: answered from the head alone (/healthz, /metrics, the web app's
/// files, refusals), an HTTP API or photo request whose body follows, the export archive, or a WebSocket upgrade
/// its endpoint accepted. Decides only; the connection carries it out.
enum HTTPRoute {
    case reply(HTTPReply)
    /// An HTTP API request with a body of `length` bytes.
    case api(HTTPAPI, length: Int)
    case photo(PhotoAPI)
    /// The export archive (`GET /api/v1/export`).
    case export(ExportAPI)
    case upgrade(any WebSocketEndpoint, WebSocketHandshake.Request, subprotocol: String?)

    static func of(_ head: HTTPRequestHead, peer: String, context: LoopContext) -> HTTPRoute {
        if let photos = context.photoAPI, PhotoAPI.serves(head.path) { return .photo(photos) }
        if let exports = context.exportAPI, head.path == ExportAPI.path { return .export(exports) }
        if head.path.hasPrefix("/api/") { return api(head, context: context) }
        let upgrading = WebSocketHandshake.isUpgradeRequest(head)
        if head.path == "/healthz" || head.path == "/metrics", !upgrading { return status(head, context: context) }
        if let staticFiles = context.staticFiles, StaticFiles.claims(head.path), !upgrading {
            switch staticFiles.respond(to: head) {
            case .file(let status, let headers, let contentType, let body, let omitBody)?:
                return .reply(HTTPReply(status: status, headers: headers, contentType: contentType, body: body, omitBody: omitBody))
            case .methodNotAllowed?:
                return .reply(.text(405, headers: [("Allow", "GET, HEAD")], "method not allowed"))
            case nil:
                return .reply(.text(404, "no such file: \(head.path)"))
            }
        }
        return upgrade(head, peer: peer, context: context)
    }

    /// HTTP API requests carry a JSON body (Content-Length only; chunked bodies are refused).
    private static func api(_ head: HTTPRequestHead, context: LoopContext) -> HTTPRoute {
        guard let api = context.httpAPI else {
            return .reply(.text(404, "the HTTP API is disabled (start the server with --api-key)"))
        }
        if !head.headers.values("transfer-encoding").isEmpty {
            return .reply(.text(411, "send the body with Content-Length"))
        }
        let lengthText = head.headers[first: "content-length"] ?? "0"
        guard let length = Int(lengthText), length >= 0 else { return .reply(.text(400, "bad Content-Length")) }
        guard length <= HTTPAPI.maxBodyBytes else { return .reply(.text(413, "body over \(HTTPAPI.maxBodyBytes) bytes")) }
        return .api(api, length: length)
    }

    /// /healthz and /metrics (the latter behind the metrics token when one is set).
    private static func status(_ head: HTTPRequestHead, context: LoopContext) -> HTTPRoute {
        guard head.method == "GET" || head.method == "HEAD" else {
            return .reply(.text(405, headers: [("Allow", "GET, HEAD")], "method not allowed"))
        }
        guard head.path == "/metrics" else {
            if let cluster = context.metrics.cluster, !cluster.healthy {
                // A load balancer sends no one to a node that cannot log writes or is catching up.
                let reason = cluster.writerConnected.load(ordering: .relaxed) ? "catching up with the shared log" : "not connected to Redis"
                return .reply(.text(503, reason, omitBody: head.method == "HEAD"))
            }
            return .reply(.text(200, "ok", omitBody: head.method == "HEAD"))
        }
        guard context.metricsAccess.allows(head) else {
            return .reply(.text(401, headers: [("WWW-Authenticate", "Bearer realm=\"metrics\"")], "/metrics needs Authorization: Bearer <metrics token>"))
        }
        let text = context.metrics.prometheusText()
        return .reply(HTTPReply(status: 200, contentType: "text/plain; version=0.0.4", body: head.method == "HEAD" ? [] : Array(text.utf8)))
    }

    /// A WebSocket endpoint's path: the upgrade is checked (RFC 6455 §4.2.1), then offered to
    /// the endpoint, which may refuse it (authentication, capacity).
    private static func upgrade(_ head: HTTPRequestHead, peer: String, context: LoopContext) -> HTTPRoute {
        guard let endpoint = context.endpoint(for: head.path) else {
            context.logger.debug("unknown path", metadata: ["peer": "\(peer)", "path": "\(head.path)"])
            return .reply(.text(404, "no such endpoint: \(head.path)"))
        }
        switch WebSocketHandshake.validate(head) {
        case .reject(let status, let headers, let reason):
            context.logger.info("handshake rejected", metadata: ["peer": "\(peer)", "status": "\(status)", "reason": "\(reason)"])
            return .reply(.text(status, headers: headers, reason))
        case .upgrade(let request):
            switch endpoint.accept(request) {
            case .reject(let status, let reason):
                context.logger.info("upgrade refused", metadata: ["peer": "\(peer)", "status": "\(status)", "reason": "\(reason)"])
                return .reply(.text(status, reason))
            case .accept(let subprotocol):
                return .upgrade(endpoint, request, subprotocol: subprotocol)
            }
        }
    }
}
