/// An absolute URL of one of two schemes, a plain one and its TLS twin:
/// `SCHEME://host[:port][/path][?query]` — the WebSocket client's `ws`/`wss` server address
/// and the push gateway's `http`/`https` webhook both parse through it.
///
/// Parsed once, up front, so a connection never meets a malformed address on its loop.
/// Deliberately narrower than a general URL parser: no user info (credentials in a URL end up
/// in logs), no fragment (RFC 6455 §3 forbids it, and nothing is sent for one over HTTP), and
/// the path and query must already be percent-encoded ASCII — what goes on the request line is
/// exactly what was given.
public struct AbsoluteURL: Sendable, Hashable, CustomStringConvertible {
    /// The scheme pair a URL may use: the plain one and the one over TLS, lowercase.
    public struct Schemes: Sendable, Hashable {
        public var plain: String
        public var secure: String
        /// How an error message names the URL ("a WebSocket URL has no fragment").
        public var kind: String

        public init(plain: String, secure: String, kind: String) {
            self.plain = plain
            self.secure = secure
            self.kind = kind
        }

        /// "a ws://", "an http://": schemes are read letter by letter, and these letters' names
        /// begin with a vowel sound.
        var article: String { plain.first.map { "aefhilmnorsx".contains($0) } == true ? "an" : "a" }
    }

    /// Why a string is not a usable URL: `problem` for code that words some cases its own way,
    /// `reason` (ending with the string itself) for people.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Problem: Sendable, Equatable {
            case noScheme, wrongScheme, userInfo, badIPv6Literal, badHost, emptyHost, badPort, fragment, badPath
        }

        public var problem: Problem
        public var reason: String
        public var description: String { reason }

        public init(problem: Problem, reason: String) {
            self.problem = problem
            self.reason = reason
        }
    }

    public var schemes: Schemes
    /// The secure scheme of the pair: TLS to the peer.
    public var isSecure: Bool
    /// A DNS name or an IP literal; an IPv6 literal is kept without its brackets.
    public var host: String
    public var port: Int
    /// The request-target: path and query, at least `/`.
    public var target: String

    public init(_ string: String, schemes: Schemes) throws(Invalid) {
        self.schemes = schemes
        let bytes = Array(string.utf8)
        func fail(_ problem: Invalid.Problem, _ reason: String) -> Invalid { Invalid(problem: problem, reason: "\(reason): \(string)") }
        guard let schemeEnd = Self.find("://", in: bytes) else {
            throw fail(.noScheme, "the URL needs \(schemes.article) \(schemes.plain):// or \(schemes.secure):// scheme")
        }
        switch String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased() {
        case schemes.plain: isSecure = false
        case schemes.secure: isSecure = true
        default: throw fail(.wrongScheme, "the scheme must be \(schemes.plain) or \(schemes.secure)")
        }
        let authorityStart = schemeEnd + 3
        let authorityEnd = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.count
        let authority = bytes[authorityStart..<authorityEnd]
        guard !authority.contains(UInt8(ascii: "@")) else { throw fail(.userInfo, "user info is not supported") }

        var portStart: Int?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")), close > authority.startIndex + 1 else {
                throw fail(.badIPv6Literal, "unterminated IPv6 literal")
            }
            host = String(decoding: authority[(authority.startIndex + 1)..<close], as: UTF8.self)
            guard host.utf8.allSatisfy({ Self.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else {
                throw fail(.badIPv6Literal, "invalid IPv6 literal")
            }
            if close + 1 < authorityEnd {
                guard authority[close + 1] == UInt8(ascii: ":") else { throw fail(.badIPv6Literal, "junk after the IPv6 literal") }
                portStart = close + 2
            }
        } else {
            let colon = authority.firstIndex(of: UInt8(ascii: ":"))
            host = String(decoding: authority[..<(colon ?? authorityEnd)], as: UTF8.self)
            portStart = colon.map { $0 + 1 }
            guard host.utf8.allSatisfy(Self.isHostByte) else { throw fail(.badHost, "invalid character in the host") }
        }
        guard !host.isEmpty else { throw fail(.emptyHost, "the host is empty") }

        if let portStart {
            let digits = bytes[portStart..<authorityEnd]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }),
                let port = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(port)
            else { throw fail(.badPort, "the port must be 1–65535") }
            self.port = port
        } else {
            port = Self.defaultPort(secure: isSecure)
        }

        let rest = bytes[authorityEnd...]
        guard !rest.contains(UInt8(ascii: "#")) else { throw fail(.fragment, "a \(schemes.kind) has no fragment") }
        guard rest.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw fail(.badPath, "the path must be percent-encoded ASCII without spaces")
        }
        let path = String(decoding: rest, as: UTF8.self)
        target = path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : path)
    }

    /// The `Host` field: the port only when it is not the scheme's default (RFC 9110 §7.2).
    public var hostHeader: String {
        Self.hostHeader(host: host, port: port, secure: isSecure)
    }

    /// Scheme, host and port, without the target: what logs may show (a query may carry a token).
    public var origin: String {
        Self.origin(scheme: isSecure ? schemes.secure : schemes.plain, host: host, port: port)
    }

    public var description: String { origin + target }

    /// 443 over TLS, 80 otherwise: the same for HTTP and WebSocket (RFC 6455 §3).
    public static func defaultPort(secure: Bool) -> Int { secure ? 443 : 80 }

    /// `host[:port]` for a `Host` field; an IPv6 literal in brackets.
    public static func hostHeader(host: String, port: Int, secure: Bool) -> String {
        let name = bracketed(host)
        return port == defaultPort(secure: secure) ? name : "\(name):\(port)"
    }

    /// `scheme://host:port`, the port always written; an IPv6 literal in brackets.
    public static func origin(scheme: String, host: String, port: Int) -> String {
        "\(scheme)://\(bracketed(host)):\(port)"
    }

    private static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    private static func find(_ needle: String, in bytes: [UInt8]) -> Int? {
        let pattern = Array(needle.utf8)
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10 || (byte | 0x20) &- UInt8(ascii: "a") < 6
    }

    /// reg-name and IPv4 characters (RFC 3986 §3.2.2), percent-encoding aside: letters, digits,
    /// `-`, `.`, `_`, `~`.
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
