/// The Redis a cluster shares, as an operator names it with `--redis` (issue 14):
///
///     redis://HOST[:PORT][/DB]                                  one Redis (port 6379 by default)
///     redis+sentinel://HOST[:PORT][,HOST[:PORT]…]/MASTER[/DB]   a Sentinel-managed Redis (26379)
///
/// Credentials and TLS (`rediss://`) are refused rather than ignored: a URL that silently lost
/// its password would connect to a server the operator meant to protect.
public enum RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    case server(RedisAddress, database: Int)
    case sentinel([RedisAddress], masterName: String, database: Int)

    public static let defaultPort = 6379
    public static let defaultSentinelPort = 26379

    public var database: Int {
        switch self {
        case .server(_, let database), .sentinel(_, _, let database): database
        }
    }

    public var description: String {
        switch self {
        case .server(let address, let database):
            "redis://\(address)/\(database)"
        case .sentinel(let sentinels, let masterName, let database):
            "redis+sentinel://\(sentinels.map(\.description).joined(separator: ","))/\(masterName)/\(database)"
        }
    }

    public init(url: String) throws(RedisURLError) {
        func fail(_ reason: String) -> RedisURLError { RedisURLError(reason: reason) }
        guard !url.isEmpty else { throw fail("the Redis URL is empty; expected redis://HOST:PORT or redis+sentinel://HOST:PORT/MASTER") }
        let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw fail("\"\(url)\" has no scheme; expected redis://HOST:PORT or redis+sentinel://HOST:PORT/MASTER")
        }
        let scheme = parts[0].lowercased()
        let rest = parts[1]
        let isSentinel: Bool
        switch scheme {
        case "redis": isSentinel = false
        case "redis+sentinel": isSentinel = true
        case "rediss": throw fail("rediss:// (Redis over TLS) is not supported; use redis:// on a private network")
        default: throw fail("unknown scheme \"\(scheme)://\"; expected redis:// or redis+sentinel://")
        }
        guard !rest.contains("?"), !rest.contains("#") else { throw fail("Redis URLs take no query (?) or fragment (#)") }
        let authority = rest.prefix { $0 != "/" }
        guard !authority.contains("@") else {
            throw fail("credentials in the Redis URL are not supported (the server would not use them)")
        }
        let path = rest.dropFirst(authority.count)
        let segments = path.isEmpty || path == "/" ? [] : path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !authority.isEmpty else { throw fail("the Redis URL has no host") }
        let defaultPort = isSentinel ? Self.defaultSentinelPort : Self.defaultPort
        if isSentinel {
            let hosts = try authority.split(separator: ",", omittingEmptySubsequences: false)
                .map { (entry) throws(RedisURLError) in try Self.address(entry, defaultPort: defaultPort) }
            guard let masterName = segments.first, !masterName.isEmpty else {
                throw fail("a Sentinel URL names its master after the hosts: redis+sentinel://HOST:PORT/MASTER")
            }
            guard segments.count <= 2 else { throw fail("unexpected path after the database in \"\(path)\"") }
            let database = try segments.count == 2 ? Self.database(segments[1]) : 0
            self = .sentinel(hosts, masterName: masterName, database: database)
        } else {
            guard !authority.contains(",") else {
                throw fail("several hosts need a Sentinel URL: redis+sentinel://HOST:PORT,HOST:PORT/MASTER")
            }
            guard segments.count <= 1 else { throw fail("unexpected path after the database in \"\(path)\"") }
            let database = try segments.first.map { (text) throws(RedisURLError) in try Self.database(text) } ?? 0
            self = .server(try Self.address(authority, defaultPort: defaultPort), database: database)
        }
    }

    private static func address(_ text: Substring, defaultPort: Int) throws(RedisURLError) -> RedisAddress {
        guard !text.isEmpty else { throw RedisURLError(reason: "an empty host in the list of hosts") }
        var host = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw RedisURLError(reason: "\"\(text)\": an IPv6 address lacks its closing ]") }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisURLError(reason: "\"\(text)\": expected :PORT after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { throw RedisURLError(reason: "\"\(text)\" has no host name before the port") }
        guard host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" || $0 == "_" }) else {
            throw RedisURLError(reason: "\"\(host)\" is not a host name or an IP address")
        }
        guard let portText else { return RedisAddress(host: String(host), port: defaultPort) }
        guard portText.allSatisfy(\.isASCIIDigit), let port = Int(portText), (1...65535).contains(port) else {
            throw RedisURLError(reason: "\"\(portText)\" is not a port (1 to 65535) in \"\(text)\"")
        }
        return RedisAddress(host: String(host), port: port)
    }

    private static func database(_ text: String) throws(RedisURLError) -> Int {
        guard text.allSatisfy(\.isASCIIDigit), let number = Int(text) else {
            throw RedisURLError(reason: "\"\(text)\" is not a database number (0, 1, 2…)")
        }
        return number
    }
}

/// Why a Redis URL was refused, in words an operator can act on.
public struct RedisURLError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public var description: String { "invalid Redis URL: \(reason)" }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
