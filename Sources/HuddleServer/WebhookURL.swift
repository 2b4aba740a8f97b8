import HuddleWebSocket

/// Where the push gateway POSTs: `http://host[:port][/path][?query]` or `https://…`
/// (`--push-webhook`).
///
/// Parsed once at start-up, by `AbsoluteURL` (the WebSocket client's parser too), so a bad
/// address is a clear error before the server listens rather than a stream of failed
/// deliveries: no user info (credentials belong in `--push-webhook-secret`, not in a URL that
/// ends up in logs), no fragment, and the path and query must already be percent-encoded
/// ASCII — the request line carries exactly what was given.
public struct WebhookURL: Sendable, Equatable, CustomStringConvertible {
    /// `https`: TLS to the receiver, its certificate verified.
    public var isSecure: Bool
    /// A DNS name or an IP literal; an IPv6 literal is kept without its brackets.
    public var host: String
    public var port: Int
    /// The request-target: path and query, at least `/`.
    public var target: String

    /// Why a string is not a usable webhook URL.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    static let schemes = AbsoluteURL.Schemes(plain: "http", secure: "https", kind: "webhook URL")

    public init(_ string: String) throws(Invalid) {
        let url: AbsoluteURL
        do {
            url = try AbsoluteURL(string, schemes: Self.schemes)
        } catch where error.problem == .userInfo {
            throw Invalid(reason: "user info is not supported (use --push-webhook-secret): \(string)")
        } catch {
            throw Invalid(reason: error.reason)
        }
        isSecure = url.isSecure
        host = url.host
        port = url.port
        target = url.target
    }

    /// The `Host` field: the port only when it is not the scheme's default (RFC 9110 §7.2).
    public var hostHeader: String { AbsoluteURL.hostHeader(host: host, port: port, secure: isSecure) }

    /// Scheme, host and port: what logs show (a query may carry a token of the receiver's).
    public var origin: String {
        AbsoluteURL.origin(scheme: isSecure ? Self.schemes.secure : Self.schemes.plain, host: host, port: port)
    }

    /// What logs show: origin and path, the query only as `?…` (it may carry a token of the
    /// receiver's), so an operator can still tell two webhooks on one host apart.
    public var logged: String {
        guard let query = target.firstIndex(of: "?") else { return origin + target }
        return origin + target[..<query] + "?…"
    }

    public var description: String { origin + target }
}
