import HuddleWebSocket

/// A WebSocket server address (RFC 6455 §3): `ws://host[:port][/path][?query]` or `wss://…`.
///
/// Parsed once, up front, by `AbsoluteURL` (the push webhook's parser too), so a connection
/// never meets a malformed address on its loop: no user info, no fragment (§3 forbids it), and
/// the path and query must already be percent-encoded ASCII — what goes on the request line is
/// exactly what was given.
public struct ClientURL: Sendable, Hashable, CustomStringConvertible {
    /// `wss`: TLS to the server, verified unless the options say otherwise.
    public var isSecure: Bool
    /// A DNS name or an IP literal; an IPv6 literal is kept without its brackets.
    public var host: String
    public var port: Int
    /// The request-target: path and query, at least `/`.
    public var target: String

    public init(secure: Bool, host: String, port: Int? = nil, target: String = "/") {
        isSecure = secure
        self.host = host
        self.port = port ?? AbsoluteURL.defaultPort(secure: secure)
        self.target = target.isEmpty ? "/" : target
    }

    /// Why a string is not a usable WebSocket URL.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    static let schemes = AbsoluteURL.Schemes(plain: "ws", secure: "wss", kind: "WebSocket URL")

    public init(_ string: String) throws(Invalid) {
        do {
            let url = try AbsoluteURL(string, schemes: Self.schemes)
            self.init(secure: url.isSecure, host: url.host, port: url.port, target: url.target)
        } catch {
            throw Invalid(reason: error.reason)
        }
    }

    /// The `Host` field: the port only when it is not the scheme's default (RFC 9110 §7.2).
    public var hostHeader: String { AbsoluteURL.hostHeader(host: host, port: port, secure: isSecure) }

    public var description: String {
        AbsoluteURL.origin(scheme: isSecure ? Self.schemes.secure : Self.schemes.plain, host: host, port: port) + target
    }
}
