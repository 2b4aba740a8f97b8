/// A WebSocket server address (RFC 6455 §3): `ws://host[:port][/path][?query]` or `wss://…`.
///
/// Parsed once, up front, so a connection never meets a malformed address on its loop. Deliberately
/// narrower than a general URL parser: no user info, no fragment (§3 forbids it), and the path and
/// query must already be percent-encoded ASCII — what goes on the request line is exactly what
/// was given.
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
        self.port = port ?? (secure ? 443 : 80)
        self.target = target.isEmpty ? "/" : target
    }

    /// Why a string is not a usable WebSocket URL.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    public init(_ string: String) throws(Invalid) {
        let bytes = Array(string.utf8)
        func fail(_ reason: String) -> Invalid { Invalid(reason: "\(reason): \(string)") }
        guard let schemeEnd = Self.find("://", in: bytes) else { throw fail("no ws:// or wss:// scheme") }
        switch String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased() {
        case "ws": isSecure = false
        case "wss": isSecure = true
        default: throw fail("scheme is not ws or wss")
        }
        let authorityStart = schemeEnd + 3
        let authorityEnd = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.count
        let authority = bytes[authorityStart..<authorityEnd]
        guard !authority.contains(UInt8(ascii: "@")) else { throw fail("user info is not supported") }

        var portStart: Int?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")), close > authority.startIndex + 1 else {
                throw fail("unterminated IPv6 literal")
            }
            host = String(decoding: authority[(authority.startIndex + 1)..<close], as: UTF8.self)
            if close + 1 < authorityEnd {
                guard authority[close + 1] == UInt8(ascii: ":") else { throw fail("junk after IPv6 literal") }
                portStart = close + 2
            }
        } else {
            let colon = authority.firstIndex(of: UInt8(ascii: ":"))
            host = String(decoding: authority[..<(colon ?? authorityEnd)], as: UTF8.self)
            portStart = colon.map { $0 + 1 }
            guard host.utf8.allSatisfy(Self.isHostByte) else { throw fail("invalid character in host") }
        }
        guard !host.isEmpty else { throw fail("empty host") }

        if let portStart {
            let digits = bytes[portStart..<authorityEnd]
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }),
                let port = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(port)
            else { throw fail("invalid port") }
            self.port = port
        } else {
            port = isSecure ? 443 : 80
        }

        let rest = bytes[authorityEnd...]
        guard !rest.contains(UInt8(ascii: "#")) else { throw fail("WebSocket URLs have no fragment") }
        guard rest.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw fail("path must be percent-encoded ASCII without spaces")
        }
        let path = String(decoding: rest, as: UTF8.self)
        target = path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : path)
    }

    /// The `Host` field: the port only when it is not the scheme's default (RFC 9110 §7.2).
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
    }

    public var description: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return "\(isSecure ? "wss" : "ws")://\(name):\(port)\(target)"
    }

    private static func find(_ needle: String, in bytes: [UInt8]) -> Int? {
        let pattern = Array(needle.utf8)
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
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
