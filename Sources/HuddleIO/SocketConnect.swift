import CHuddleShims
import Glibc

/// The client side of TCP: resolve, then a non-blocking connect whose completion the event loop
/// reports as writability, after which `connectionError` tells success from failure.
extension Socket {
    /// The stream addresses of `host` in the resolver's order of preference. A numeric host
    /// (`127.0.0.1`, `::1`) is converted without any lookup; a name goes through getaddrinfo,
    /// which blocks the calling thread for as long as the resolver takes (instant for names in
    /// /etc/hosts, a network round trip for DNS).
    public static func resolve(host: String, port: Int) throws -> [SocketAddress] {
        if let numeric = try? lookUp(host: host, port: port, flags: AI_NUMERICHOST | AI_NUMERICSERV) {
            return numeric
        }
        // AI_ADDRCONFIG: no IPv6 candidates on a host without IPv6, where they could only fail.
        return try lookUp(host: host, port: port, flags: AI_NUMERICSERV | AI_ADDRCONFIG)
    }

    private static func lookUp(host: String, port: Int, flags: Int32) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = flags
        var info: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &info)
        guard status == 0 else {
            throw SystemError("getaddrinfo(\(host)): \(String(cString: gai_strerror(status)))", errno: 0)
        }
        defer { freeaddrinfo(info) }
        var addresses: [SocketAddress] = []
        var next = info
        while let entry = next {
            if let address = entry.pointee.ai_addr {
                addresses.append(SocketAddress(address, length: entry.pointee.ai_addrlen))
            }
            next = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw SystemError("getaddrinfo(\(host)): no addresses", errno: 0) }
        return addresses
    }

    /// Starts connecting a new non-blocking socket (TCP_NODELAY, close-on-exec) to `address`.
    /// `completed` is true when the kernel finished at once (it can, on loopback); otherwise the
    /// connect is in progress: watch the fd for writability, then ask `connectionError`.
    /// Throws when the attempt fails at once (ECONNREFUSED, ENETUNREACH…); the fd is closed then.
    ///
    /// `source`, when given, is the local address bound before connecting (its port is picked
    /// at connect time, per destination): a load generator spreads its connections over
    /// several loopback addresses, each with its own ephemeral ports toward one server address.
    public static func connect(to address: SocketAddress, from source: SocketAddress? = nil) throws -> (fd: Int32, completed: Bool) {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        // We coalesce writes per loop turn ourselves; Nagle would only delay small frames.
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if let source {
            do {
                try bind(fd, to: source)
            } catch {
                Glibc.close(fd)
                throw error
            }
        }
        var storage = address.storage
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, address.length) }
        }
        if status == 0 { return (fd, true) }
        if errno == EINPROGRESS || errno == EINTR { return (fd, false) }
        let error = SystemError("connect(\(address))")
        Glibc.close(fd)
        throw error
    }

    /// Starts a non-blocking connect to the first address of `host` that accepts the attempt
    /// (an address that fails at once, such as IPv6 without a route, gives way to the next).
    /// The connect may still be in progress: see `connect(to:)`.
    public static func connect(host: String, port: Int) throws -> Int32 {
        var candidates = try resolve(host: host, port: port)
        return try connectToFirst(of: &candidates)
    }

    /// Starts a non-blocking connect to the first of `candidates` that accepts the attempt,
    /// removing every address tried: what is left is for the next try if this connect fails
    /// later (ECONNREFUSED once the fd turns writable). Throws the last address's error when
    /// none accepted. The connect may still be in progress: see `connect(to:)`.
    /// With a `source`, candidates of the other address family are skipped.
    public static func connectToFirst(of candidates: inout [SocketAddress], from source: SocketAddress? = nil) throws -> Int32 {
        var lastError: any Error = SystemError("connect", errno: EHOSTUNREACH)
        while !candidates.isEmpty {
            let candidate = candidates.removeFirst()
            if let source, source.family != candidate.family { continue }
            do {
                return try connect(to: candidate, from: source).fd
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Binds `fd` to `source` before its connect. IP_BIND_ADDRESS_NO_PORT defers the port to
    /// the connect, which picks one free for that destination: bind alone would reserve a port
    /// for every destination and run out after one range of them.
    private static func bind(_ fd: Int32, to source: SocketAddress) throws {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_IP), IP_BIND_ADDRESS_NO_PORT, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = source.storage
        let status = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, source.length) }
        }
        guard status == 0 else { throw SystemError("bind(\(source))") }
    }

    /// The outcome of a non-blocking connect once the fd turned writable (or reported an error):
    /// 0 when connected, else the errno that failed it (ECONNREFUSED, ETIMEDOUT…).
    public static func connectionError(_ fd: Int32) -> Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return errno }
        return error
    }
}
