import Glibc

/// One request and its whole response over a fresh TCP (or TLS) connection, on the calling
/// thread, within one deadline: for rare, small fetches a worker thread may wait on (an
/// identity provider's keys), where an event loop would be machinery for nothing. The socket
/// stays non-blocking; the waits are poll(2) with what is left of the deadline.
public enum BlockingExchange {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// Sends `request`, then reads until the peer closes; the response may not exceed `limit` bytes.
    public static func exchange(
        host: String, port: Int, tls: TLSClientContext?, request: [UInt8], limit: Int, timeoutMilliseconds: Int64
    ) throws(Failure) -> [UInt8] {
        let deadline = MonotonicClock.milliseconds() + timeoutMilliseconds
        let fd: Int32
        do { fd = try Socket.connect(host: host, port: port) } catch { throw Failure(reason: "cannot connect to \(host):\(port): \(error)") }
        defer { close(fd) }
        try wait(fd, for: Int16(POLLOUT), until: deadline, doing: "connecting")
        let connectError = Socket.connectionError(fd)
        guard connectError == 0 else { throw Failure(reason: "cannot connect to \(host):\(port): \(String(cString: strerror(connectError)))") }
        let stream: TLSStream?
        do { stream = try tls.map { try TLSStream(clientContext: $0, fd: fd, serverName: host) } } catch { throw Failure(reason: "TLS: \(error)") }
        if let stream {
            while true {
                switch stream.handshake() {
                case .bytes: break
                case .wouldBlock:
                    try wait(fd, for: Int16(stream.handshakeWaitsForWritable ? POLLOUT : POLLIN), until: deadline, doing: "the TLS handshake")
                    continue
                case .endOfStream: throw Failure(reason: "the server closed the connection during the TLS handshake")
                case .failed(let reason): throw Failure(reason: reason)
                }
                break
            }
        }
        var sent = 0
        while sent < request.count {
            let result = request[sent...].withUnsafeBytes { bytes in stream?.write(from: bytes) ?? Socket.write(fd, from: bytes) }
            switch result {
            case .bytes(let count): sent += count
            case .wouldBlock: try wait(fd, for: Int16(POLLOUT), until: deadline, doing: "sending the request")
            case .endOfStream, .failed: throw Failure(reason: "the connection broke while sending the request")
            }
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let result = buffer.withUnsafeMutableBytes { bytes in stream?.read(into: bytes) ?? Socket.read(fd, into: bytes) }
            switch result {
            case .bytes(let count):
                response += buffer[0..<count]
                guard response.count <= limit else { throw Failure(reason: "the response is over \(limit) bytes") }
            case .wouldBlock: try wait(fd, for: Int16(POLLIN), until: deadline, doing: "reading the response")
            case .endOfStream: return response
            case .failed(let reason): throw Failure(reason: "reading the response: \(reason)")
            }
        }
    }

    private static func wait(_ fd: Int32, for events: Int16, until deadline: Int64, doing what: String) throws(Failure) {
        while true {
            let left = deadline - MonotonicClock.milliseconds()
            guard left > 0 else { throw Failure(reason: "timed out \(what)") }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(left, Int64(Int32.max))))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw Failure(reason: "poll: \(String(cString: strerror(errno)))") }
        }
    }
}
