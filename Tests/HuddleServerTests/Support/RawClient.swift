import CHuddleShims
import Foundation
import HuddleWebSocket

/// A deliberately low-level test client on a blocking socket: it can send anything, valid or
/// not (unmasked frames, bad UTF-8, bombs), and reads back raw HTTP responses and frames. The
/// frame side uses HuddleWebSocket's own codec in the client role.
final class RawClient {
    let fd: Int32
    private var pending: [UInt8] = []
    private var reader = WebSocketMessageReader(role: .client, maxMessageSize: 1 << 26)
    private var events: [WebSocketEvent] = []
    /// After `startTLS`: every byte goes through OpenSSL (certificate not checked: the tests
    /// that use it are about the server's TLS I/O, not trust).
    private var tls: (context: OpaquePointer, ssl: OpaquePointer)?

    /// `receiveBufferSize` shrinks our socket buffer (before connecting, so the TCP window is
    /// small too): a server's writes to a client that does not read then back up quickly.
    /// `sourceAddress` (another loopback address, such as 127.0.0.2) makes the connection come
    /// from a client address of its own, for the server's per-address bounds.
    init(port: Int, receiveTimeout: Double = 10, receiveBufferSize: Int32? = nil, sourceAddress: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let sourceAddress {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(sourceAddress)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw TestFailure("bind to \(sourceAddress) failed: errno \(errno)") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else { throw TestFailure("connect failed: errno \(errno)") }
        setReceiveTimeout(receiveTimeout)
    }

    deinit {
        if let tls {
            SSL_free(tls.ssl)
            SSL_CTX_free(tls.context)
        }
        close(fd)
    }

    /// The TLS handshake (TLS 1.3 when the server offers it), on the blocking socket.
    func startTLS() throws {
        guard let context = SSL_CTX_new(TLS_client_method()), let ssl = SSL_new(context) else { throw TestFailure("SSL_new failed") }
        tls = (context, ssl)
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        SSL_set_fd(ssl, fd)
        guard SSL_connect(ssl) == 1 else { throw TestFailure("TLS handshake failed: \(SSL_get_error(ssl, -1))") }
    }

    /// Asks the server to update its sending keys too (TLS 1.3 §4.6.3); the KeyUpdate leaves
    /// with our next write.
    func requestKeyUpdate() throws {
        guard let tls, SSL_key_update(tls.ssl, SSL_KEY_UPDATE_REQUESTED) == 1 else { throw TestFailure("SSL_key_update failed") }
    }

    func setReceiveTimeout(_ seconds: Double) {
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { bytes -> Int in
                guard let tls else { return Foundation.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
                var written = 0
                return SSL_write_ex(tls.ssl, bytes.baseAddress, bytes.count, &written) == 1 ? written : -1
            }
            guard sent > 0 else { throw TestFailure("send failed: errno \(errno)") }
            offset += sent
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads more bytes; nil on EOF, throws on timeout or error.
    private func receive() throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { buffer -> Int in
            guard let tls else {
                // A signal (a test's child server exiting) interrupts a blocking recv: read again.
                var count: Int
                repeat { count = recv(fd, buffer.baseAddress, buffer.count, 0) } while count < 0 && errno == EINTR
                return count
            }
            var read = 0
            if SSL_read_ex(tls.ssl, buffer.baseAddress, buffer.count, &read) == 1 { return read }
            // A clean close_notify or EOF reads as end of stream; a timeout as EAGAIN.
            let error = SSL_get_error(tls.ssl, 0)
            return error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && errno == 0) ? 0 : -1
        }
        if count == 0 { return nil }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { throw TestFailure("timed out waiting for the server") }
            if errno == ECONNRESET { return nil }
            throw TestFailure("recv failed: errno \(errno)")
        }
        return Array(buffer[0..<count])
    }

    struct Response {
        var status: Int
        var headers: [String: String]  // lowercased names
        var body: String
    }

    /// Reads an HTTP response head (and whatever body arrived with it or before EOF).
    func readResponse() throws -> Response {
        while true {
            if let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
                pending.removeSubrange(..<end.upperBound)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                var body = ""
                if let length = headers["content-length"].flatMap(Int.init) {
                    while pending.count < length, let more = try receive() { pending += more }
                    body = String(decoding: pending.prefix(length), as: UTF8.self)
                    pending.removeFirst(min(length, pending.count))
                }
                return Response(status: Int(statusLine[1]) ?? 0, headers: headers, body: body)
            }
            guard let more = try receive() else { throw TestFailure("connection closed before a response; got \(pending.count) bytes") }
            pending += more
        }
    }

    /// Performs the opening handshake on `path`; returns the 101 response.
    @discardableResult
    func upgrade(path: String, extraHeaders: [String] = []) throws -> Response {
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        for header in extraHeaders { request += header + "\r\n" }
        try send(request + "\r\n")
        let response = try readResponse()
        guard response.status == 101 else { throw TestFailure("upgrade refused: \(response.status) \(response.body)") }
        return response
    }

    func sendFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, rsv1: Bool = false, masked: Bool = true) throws {
        let key: UInt32? = masked ? UInt32.random(in: 0...UInt32.max) : nil
        try send(WebSocketFrameWriter.frame(opcode: opcode, payload: payload, fin: fin, rsv1: rsv1, maskingKey: key))
    }

    /// The next event from the server; nil when the connection ended.
    func nextEvent() throws -> WebSocketEvent? {
        while events.isEmpty {
            if !pending.isEmpty {
                let bytes = pending
                pending = []
                try feed(bytes)
                continue
            }
            guard let more = try receive() else { return nil }
            try feed(more)
        }
        return events.removeFirst()
    }

    private func feed(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            try reader.read(raw) { event in events.append(event) }
        }
    }

    /// Reads until the server's close frame; returns its code (nil = no close frame before EOF).
    func readCloseCode() throws -> WebSocketCloseCode? {
        while let event = try nextEvent() {
            if case .close(let code, _) = event { return code ?? .noStatusReceived }
        }
        return nil
    }

    /// True when the server closed the TCP connection (EOF) within the receive timeout.
    func waitForEOF() -> Bool {
        while true {
            do {
                if try receive() == nil { return true }
            } catch {
                return false
            }
        }
    }
}
