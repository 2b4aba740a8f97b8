/// Serializes the small complete HTTP/1.1 responses the server sends itself: handshake
/// rejections, `/healthz`, `/metrics`. Every response is length-delimited, so a keep-alive peer
/// knows where it ends without the server ever chunking.
public enum HTTPResponseWriter {
    /// A complete HTTP/1.1 response with `Content-Length` (and `Connection: close` when `close`).
    /// The writer adds those two fields itself; `headers` must not contain them. CR and LF are
    /// dropped from the reason and header fields, so a value that came from a peer cannot split
    /// the response.
    public static func response(
        status: Int,
        reason: String? = nil,
        headers: [(String, String)] = [],
        body: [UInt8] = [],
        close: Bool = true
    ) -> [UInt8] {
        var bytes = head(status: status, reason: reason, headers: headers, contentLength: body.count, close: close, reserving: body.count)
        bytes.append(contentsOf: body)
        return bytes
    }

    /// The head of a response whose `contentLength` bytes of body the caller sends after it
    /// (a body streamed from disk), with the same rules as `response`.
    public static func head(
        status: Int,
        reason: String? = nil,
        headers: [(String, String)] = [],
        contentLength: Int,
        close: Bool = true,
        reserving bodyCapacity: Int = 0
    ) -> [UInt8] {
        assert(
            !headers.contains { asciiCaseInsensitiveEquals($0.0, "Content-Length") || asciiCaseInsensitiveEquals($0.0, "Connection") },
            "HTTPResponseWriter adds Content-Length and Connection itself"
        )
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + bodyCapacity)
        appendStatusLine(status: status, reason: reason ?? standardReason(status), to: &bytes)
        for (name, value) in headers {
            appendField(name, value, to: &bytes)
        }
        appendField("Content-Length", String(contentLength), to: &bytes)
        if close {
            appendField("Connection", "close", to: &bytes)
        }
        bytes.append(contentsOf: "\r\n".utf8)
        return bytes
    }

    /// The reason phrase RFC 9110 §15 gives a status, or "" for one it does not name (a reason
    /// phrase may be empty).
    public static func standardReason(_ status: Int) -> String {
        switch status {
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 411: return "Length Required"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return ""
        }
    }

    static func appendStatusLine(status: Int, reason: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: "HTTP/1.1 ".utf8)
        bytes.append(contentsOf: String(status).utf8)
        bytes.append(UInt8(ascii: " "))
        appendWithoutLineBreaks(reason, to: &bytes)
        bytes.append(contentsOf: "\r\n".utf8)
    }

    static func appendField(_ name: String, _ value: String, to bytes: inout [UInt8]) {
        appendWithoutLineBreaks(name, to: &bytes)
        bytes.append(contentsOf: ": ".utf8)
        appendWithoutLineBreaks(value, to: &bytes)
        bytes.append(contentsOf: "\r\n".utf8)
    }

    private static func appendWithoutLineBreaks(_ text: String, to bytes: inout [UInt8]) {
        for byte in text.utf8 where byte != 0x0D && byte != 0x0A {
            bytes.append(byte)
        }
    }
}
