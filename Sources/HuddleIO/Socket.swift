import CHuddleShims
import Glibc

/// What a non-blocking read or write did.
public enum IOResult: Equatable, Sendable {
    /// This many bytes moved (never 0: a 0-byte read is `.endOfStream`).
    case bytes(Int)
    /// The kernel (or TLS) cannot move bytes now; wait for readiness.
    case wouldBlock
    /// The peer closed its side.
    case endOfStream
    /// The connection is broken (reset, TLS failure…); the string says why, for the log.
    case failed(String)
}

/// Thin, non-blocking POSIX socket calls. File descriptors stay plain `Int32`s: the owner
/// (a listener or a connection) decides when to close them.
public enum Socket {
    /// A non-blocking TCP listening socket, without SO_REUSEPORT: a port already bound (by
    /// another server) fails with EADDRINUSE.
    ///
    /// The backlog is the kernel's maximum by default: Linux caps whatever `listen` asks at
    /// `net.core.somaxconn`, so asking for the most gives that. A reconnect storm (every client of
    /// a restarted node at once) overflowed a fixed 1,024, and each handshake dropped that way
    /// costs its client a SYN retry 1, 3, 7 s later; an operator deepens the queue with the sysctl.
    public static func listen(host: String, port: Int, backlog: Int32 = .max) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var info: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &info)
        guard status == 0, let first = info else {
            throw SystemError("getaddrinfo(\(host)): \(String(cString: gai_strerror(status)))", errno: 0)
        }
        defer { freeaddrinfo(info) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let error = SystemError("bind(\(host):\(port))")
            close(fd)
            throw error
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = SystemError("listen")
            close(fd)
            throw error
        }
        return fd
    }

    /// The port a socket is bound to (how `--port 0` learns its port).
    public static func localPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return 0 }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer -> Int in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// Accepts one pending connection: its fd (non-blocking, TCP_NODELAY) and peer address,
    /// or nil when none is pending. Throws on a real error (EMFILE and the like).
    public static func accept(_ listener: Int32) throws -> (fd: Int32, peer: String)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                huddle_accept4_nonblocking(listener, $0, &length)
            }
        }
        if fd < 0 {
            switch errno {
            case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO: return nil
            default: throw SystemError("accept4")
            }
        }
        // Small frames must leave at once; we already coalesce per loop turn, so Nagle only adds latency.
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return (fd, describe(storage))
    }

    /// The peer's address of connected socket `fd` (as `accept` gives it), or nil once the
    /// peer is gone (ENOTCONN) or `fd` is no socket.
    public static func peerAddress(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        return status == 0 ? describe(storage) : nil
    }

    private static func describe(_ storage: sockaddr_storage) -> String {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer -> String in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                var raw = address.pointee.sin_addr
                inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            }
        }
    }

    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
        if count > 0 { return .bytes(count) }
        if count == 0 { return .endOfStream }
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR: return .wouldBlock
        default: return .failed(String(cString: strerror(errno)))
        }
    }

    /// MSG_NOSIGNAL: a peer that vanished must give us EPIPE, not kill the process with SIGPIPE.
    public static func write(_ fd: Int32, from buffer: UnsafeRawBufferPointer) -> IOResult {
        let count = send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        if count >= 0 { return count == 0 ? .wouldBlock : .bytes(count) }
        switch errno {
        case EAGAIN, EWOULDBLOCK, EINTR: return .wouldBlock
        default: return .failed(String(cString: strerror(errno)))
        }
    }

    /// Half-closes our side so the peer reads everything we sent, then EOF — closing outright
    /// with unread input would make the kernel send RST and the peer could lose our close frame.
    public static func shutdownWrite(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_WR))
    }
}
