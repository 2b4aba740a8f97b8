import CHuddleShims
import Foundation
import HuddleIO
import Synchronization

/// A blocking test server's socket: bound to a free port on 127.0.0.1; once started, a thread
/// that accepts, and a thread per connection (10 s receive timeout) that gets it already through
/// TLS when a context is given. The accepting thread keeps it alive: call `stop()` when done.
final class LoopbackListener: @unchecked Sendable {
    /// One accepted connection, read and written through TLS or not alike.
    struct Peer {
        let fd: Int32
        let tls: TLSStream?

        /// The next bytes; nil at the end, a timeout or an error.
        func receive() -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            let result = buffer.withUnsafeMutableBytes { tls?.read(into: $0) ?? Socket.read(fd, into: $0) }
            guard case .bytes(let count) = result else { return nil }
            return Array(buffer[0..<count])
        }

        /// Bytes up to the end of an HTTP request head (split there), and what came after it.
        func receiveHead() -> (head: String, rest: [UInt8])? {
            var pending: [UInt8] = []
            while true {
                if let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                    return (String(decoding: pending[..<end.lowerBound], as: UTF8.self), Array(pending[end.upperBound...]))
                }
                guard let more = receive() else { return nil }
                pending += more
            }
        }

        func send(_ bytes: [UInt8]) {
            var sent = 0
            while sent < bytes.count {
                guard case .bytes(let count) = bytes[sent...].withUnsafeBytes({ tls?.write(from: $0) ?? Socket.write(fd, from: $0) }) else { return }
                sent += count
            }
        }
    }

    let port: Int
    private let listener: Int32
    private let tls: TLSContext?
    private let stopped = Mutex(false)

    init(tls: TLSContext? = nil) throws {
        self.tls = tls
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw TestFailure("cannot listen on 127.0.0.1: errno \(errno)")
        }
        listener = fd
        port = Socket.localPort(fd)
    }

    func start(_ serve: @escaping @Sendable (Peer) -> Void) {
        let fd = listener, tls = tls
        Thread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return  // the listener was closed
                }
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                Thread {
                    defer { close(client) }
                    var stream: TLSStream?
                    if let tls {
                        guard let handshaken = try? TLSStream(context: tls, fd: client), case .bytes = handshaken.handshake() else { return }
                        stream = handshaken
                    }
                    serve(Peer(fd: client, tls: stream))
                    stream?.shutdown()
                }.start()
            }
        }.start()
    }

    /// Closes the listening socket: the accepting thread ends.
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
