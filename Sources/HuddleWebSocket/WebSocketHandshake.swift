import CHuddleShims

/// The RFC 6455 §4 opening handshake, both sides: the server validates an upgrade request and
/// writes the 101; the client writes the request and validates the 101. Extension negotiation
/// itself belongs to the extensions: this hands over their raw offers and answers.
public enum WebSocketHandshake {
    /// The GUID RFC 6455 §1.3 appends to the key, proving the server read the request as WebSocket.
    public static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// A request that passed validation.
    public struct Request: Sendable {
        public var key: String
        /// Every offered extension in order, one element per offer with its parameters
        /// (`permessage-deflate; client_max_window_bits`), across all `Sec-WebSocket-Extensions`
        /// fields; split at commas outside quoted strings.
        public var extensionOffers: [String]
        /// The offered subprotocols in the client's order of preference, case kept (they are
        /// case-sensitive).
        public var subprotocols: [String]
        public var head: HTTPRequestHead

        public init(key: String, extensionOffers: [String], subprotocols: [String], head: HTTPRequestHead) {
            self.key = key
            self.extensionOffers = extensionOffers
            self.subprotocols = subprotocols
            self.head = head
        }
    }

    public enum Validation: Sendable {
        case upgrade(Request)
        /// Answer with `HTTPResponseWriter.response(status:headers:body:)` and close; `reason` is
        /// a fixed phrase (never peer bytes), fit for the body and the log.
        case reject(status: Int, headers: [(String, String)], reason: String)
    }

    // MARK: Server side

    /// Checks a request against RFC 6455 §4.2.1, in the order a client can best act on: the
    /// first failed rule decides the answer.
    ///
    /// A method other than GET gets 405 with `Allow: GET` rather than 400: it names the fix,
    /// and RFC 9110 §15.5.6 makes `Allow` part of a 405.
    public static func validate(_ head: HTTPRequestHead) -> Validation {
        let headers = head.headers
        guard head.method == "GET" else {
            return .reject(status: 405, headers: [("Allow", "GET")], reason: "WebSocket upgrade requires GET")
        }
        guard head.versionMajor == 1 else {
            return .reject(status: 505, headers: [], reason: "HTTP version not supported")
        }
        guard head.versionMinor >= 1 else {
            return badRequest("WebSocket upgrade requires HTTP/1.1")
        }
        // RFC 9112 §3.2: a missing or repeated Host is 400 for any HTTP/1.1 request.
        let hosts = headers.values("Host")
        guard hosts.count == 1, !hosts[0].isEmpty else {
            return badRequest("missing or repeated Host")
        }
        guard isUpgradeRequest(head) else {
            return badRequest("Upgrade header does not name websocket")
        }
        guard headers.tokens("Connection").contains("upgrade") else {
            return badRequest("Connection header does not name upgrade")
        }
        // RFC 6455 §4.2.2: a version we do not speak is 426 naming the one we do, so the client
        // can retry with it.
        guard headers.values("Sec-WebSocket-Version") == ["13"] else {
            return .reject(status: 426, headers: [("Sec-WebSocket-Version", "13")], reason: "unsupported WebSocket version")
        }
        let keys = headers.values("Sec-WebSocket-Key")
        guard keys.count == 1, let nonce = Base64.decode(keys[0]), nonce.count == 16 else {
            return badRequest("invalid Sec-WebSocket-Key")
        }
        // Bytes after the head are WebSocket frames; a body would be read as frames instead.
        guard headers.values("Content-Length").allSatisfy(isZeroLength),
              headers.values("Transfer-Encoding").isEmpty
        else {
            return badRequest("WebSocket upgrade must not carry a body")
        }
        return .upgrade(Request(
            key: keys[0],
            extensionOffers: headers.listElements("Sec-WebSocket-Extensions"),
            subprotocols: headers.listElements("Sec-WebSocket-Protocol"),
            head: head
        ))
    }

    /// Whether the request asks for WebSocket at all: tells a broken upgrade (answered by
    /// `validate`) from a plain request such as `GET /healthz` (answered by its endpoint).
    public static func isUpgradeRequest(_ head: HTTPRequestHead) -> Bool {
        head.headers.tokens("Upgrade").contains("websocket")
    }

    /// base64(SHA-1(key + GUID)) (RFC 6455 §4.2.2).
    public static func acceptValue(forKey key: String) -> String {
        var input = Array(key.utf8)
        input.append(contentsOf: acceptGUID.utf8)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(SHA_DIGEST_LENGTH)) { digest in
            _ = input.withUnsafeBufferPointer { source in
                SHA1(source.baseAddress, source.count, digest.baseAddress)
            }
            return Base64.encode(digest)
        }
    }

    /// The 101 that completes the server side. `extensionHeader` is the extensions' accepted
    /// answer, `subprotocol` one the client offered; nil leaves the field out.
    public static func upgradeResponse(key: String, extensionHeader: String?, subprotocol: String?) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160)
        HTTPResponseWriter.appendStatusLine(status: 101, reason: "Switching Protocols", to: &bytes)
        HTTPResponseWriter.appendField("Upgrade", "websocket", to: &bytes)
        HTTPResponseWriter.appendField("Connection", "Upgrade", to: &bytes)
        HTTPResponseWriter.appendField("Sec-WebSocket-Accept", acceptValue(forKey: key), to: &bytes)
        if let extensionHeader {
            HTTPResponseWriter.appendField("Sec-WebSocket-Extensions", extensionHeader, to: &bytes)
        }
        if let subprotocol {
            HTTPResponseWriter.appendField("Sec-WebSocket-Protocol", subprotocol, to: &bytes)
        }
        bytes.append(contentsOf: "\r\n".utf8)
        return bytes
    }

    // MARK: Client side

    /// A fresh `Sec-WebSocket-Key`: 16 random bytes, base64 (RFC 6455 §4.1).
    public static func makeKey() -> String {
        var nonce = [UInt8](repeating: 0, count: 16)
        let generated = nonce.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        if generated != 1 {
            // OpenSSL's generator can fail only when unseeded; the nonce need not be secret,
            // just unpredictable, which the system generator (getrandom) also gives.
            var system = SystemRandomNumberGenerator()
            for index in nonce.indices { nonce[index] = system.next() }
        }
        return Base64.encode(nonce)
    }

    /// The upgrade request a client sends. `path` is the request-target (with its query),
    /// already percent-encoded; `extensionOffer` the whole `Sec-WebSocket-Extensions` value.
    public static func clientRequest(
        host: String,
        path: String,
        key: String,
        extensionOffer: String?,
        subprotocols: [String],
        extraHeaders: [(String, String)]
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        bytes.append(contentsOf: "GET ".utf8)
        bytes.append(contentsOf: (path.isEmpty ? "/" : path).utf8.lazy.filter { $0 > 0x20 && $0 != 0x7F })
        bytes.append(contentsOf: " HTTP/1.1\r\n".utf8)
        HTTPResponseWriter.appendField("Host", host, to: &bytes)
        HTTPResponseWriter.appendField("Upgrade", "websocket", to: &bytes)
        HTTPResponseWriter.appendField("Connection", "Upgrade", to: &bytes)
        HTTPResponseWriter.appendField("Sec-WebSocket-Key", key, to: &bytes)
        HTTPResponseWriter.appendField("Sec-WebSocket-Version", "13", to: &bytes)
        if let extensionOffer {
            HTTPResponseWriter.appendField("Sec-WebSocket-Extensions", extensionOffer, to: &bytes)
        }
        if !subprotocols.isEmpty {
            HTTPResponseWriter.appendField("Sec-WebSocket-Protocol", subprotocols.joined(separator: ", "), to: &bytes)
        }
        for (name, value) in extraHeaders {
            HTTPResponseWriter.appendField(name, value, to: &bytes)
        }
        bytes.append(contentsOf: "\r\n".utf8)
        return bytes
    }

    /// Checks the server's answer against RFC 6455 §4.1 and returns what it negotiated:
    /// `extensions`, one element per accepted extension with its parameters (the caller must
    /// fail the connection if one was not offered, §9.1), and the chosen `subprotocol`.
    ///
    /// - Throws: `HTTPParseError` whose `status` is the response's own status: anything but 101
    ///   means the server refused (401, 403, 429, 503… — the client decides whether to retry);
    ///   101 means it switched but the handshake is invalid, and the connection must be failed.
    public static func validateServerResponse(
        _ head: HTTPResponseHead,
        key: String,
        offeredSubprotocols: [String] = []
    ) throws(HTTPParseError) -> (extensions: [String], subprotocol: String?) {
        guard head.status == 101 else {
            throw HTTPParseError(status: head.status, reason: "server refused the WebSocket upgrade")
        }
        func invalid(_ reason: String) -> HTTPParseError { HTTPParseError(status: 101, reason: reason) }
        let headers = head.headers
        guard headers.tokens("Upgrade").contains("websocket") else {
            throw invalid("response Upgrade header does not name websocket")
        }
        guard headers.tokens("Connection").contains("upgrade") else {
            throw invalid("response Connection header does not name upgrade")
        }
        guard headers.values("Sec-WebSocket-Accept") == [acceptValue(forKey: key)] else {
            throw invalid("Sec-WebSocket-Accept does not match the key")
        }
        let chosen = headers.listElements("Sec-WebSocket-Protocol")
        guard chosen.count <= 1, chosen.allSatisfy(offeredSubprotocols.contains) else {
            throw invalid("server chose a subprotocol that was not offered")
        }
        return (headers.listElements("Sec-WebSocket-Extensions"), chosen.first)
    }

    private static func badRequest(_ reason: String) -> Validation {
        .reject(status: 400, headers: [], reason: reason)
    }

    private static func isZeroLength(_ contentLength: String) -> Bool {
        !contentLength.isEmpty && contentLength.utf8.allSatisfy { $0 == UInt8(ascii: "0") }
    }
}
