/// Why an HTTP head was refused, as the status a server answers with: 400 (malformed),
/// 414 (request line too long), 431 (head too large or too many headers), 505 (not HTTP/1.x).
/// The reason is a short fixed phrase meant for the log and the response body; it never echoes
/// the peer's bytes, so it is safe to write back verbatim.
///
/// A client parsing a server's response gets the same type (the status then only classifies the
/// defect); `WebSocketHandshake.validateServerResponse` also uses it, documented there.
public struct HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status): \(reason)" }

    static func badRequest(_ reason: String) -> HTTPParseError {
        HTTPParseError(status: 400, reason: reason)
    }
}
