/// Where the push gateway POSTs: `http://host[:port][/path][?query]` or `https://…`
/// (`--push-webhook`).
///
/// Parsed once at start-up, so a bad address is a clear error before the server listens rather
/// than a stream of failed deliveries. Deliberately narrow: no user info (credentials belong in
/// `--push-webhook-secret`, not in a URL that ends up in logs), no fragment, and the path and
/// query must already be percent-encoded ASCII — the request line carries exactly what was given.
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

    public init(_ string: String) throws(Invalid) {
        let bytes = Array(string.utf8)
        func fail(_ reason: String) -> Invalid { Invalid(reason: "\(reason): \(string)") }
        guard let schemeEnd = Self.find("://", in: bytes) else { throw fail("the URL needs an http:// or https:// scheme") }
        switch String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased() {
        case "http": isSecure = false
        case "https": isSecure = true
        default: throw fail("the scheme must be http or https")
        }
        let authorityStart = schemeEnd + 3
        let authorityEnd = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.count
        let authority = bytes[authorityStart..<authorityEnd]
        guard !authority.contains(UInt8(ascii: "@")) else { throw fail("user info is not supported (use --push-webhook-secret)") }

        var portStart: Int?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")), close > authority.startIndex + 1 else {
                throw fail("unterminated IPv6 literal")
            }
            host = String(decoding: authority[(authority.startIndex + 1)..<close], as: UTF8.self)
            guard host.utf8.allSatisfy({ Self.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else {
                throw fail("invalid IPv6 literal")
            }
            if close + 1 < authorityEnd {
                guard authority[close + 1] == UInt8(ascii: ":") else { throw fail("junk after the IPv6 literal") }
                portStart = close + 2
            }
        } else {
            let colon = authority.firstIndex(of: UInt8(ascii: ":"))
            host = String(decoding: authority[..<(colon ?? authorityEnd)], as: UTF8.self)
            portStart = colon.map { $0 + 1 }
            guard host.utf8.allSatisfy(Self.isHostByte) else { throw fail("invalid character in the host") }
        }
        guard !host.isEmpty else { throw fail("the host is empty") }

        if let portStart {
            let digits = bytes[portStart..<authorityEnd]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }),
                let port = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(port)
            else { throw fail("the port must be 1–65535") }
            self.port = port
        } else {
            port = isSecure ? 443 : 80
        }

        let rest = bytes[authorityEnd...]
        guard !rest.contains(UInt8(ascii: "#")) else { throw fail("a webhook URL has no fragment") }
        guard rest.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw fail("the path must be percent-encoded ASCII without spaces")
        }
        let path = String(decoding: rest, as: UTF8.self)
        target = path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : path)
    }

    /// The `Host` field: the port only when it is not the scheme's default (RFC 9110 §7.2).
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// Scheme, host and port: what logs show (a query may carry a token of the receiver's).
    public var origin: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return "\(isSecure ? "https" : "http")://\(name):\(port)"
    }

    public var description: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return "\(isSecure ? "https" : "http")://\(name):\(port)\(target)"
    }

    private static func find(_ needle: String, in bytes: [UInt8]) -> Int? {
        let pattern = Array(needle.utf8)
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10 || (byte | 0x20) &- UInt8(ascii: "a") < 6
    }

    /// reg-name and IPv4 characters (RFC 3986 §3.2.2), percent-encoding aside.
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
