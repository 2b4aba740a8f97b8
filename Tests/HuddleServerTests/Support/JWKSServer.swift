import CHuddleShims
import Foundation
import HuddleIO
import JWTTestSupport
import Synchronization

/// A test identity provider: its signing keys (made in the test) and a tiny blocking HTTP
/// server on a free loopback port that serves their JWKS, which the test may change (a key
/// rotation). Counts the downloads. Call `stop()` when done.
final class JWKSServer: @unchecked Sendable {
    let issuer: String
    let port: Int
    private let listener: Int32
    private let state = Mutex<(document: String, downloads: Int, stopped: Bool)>(("", 0, false))
    /// https with the test CA's server certificate.
    private let tlsContext: TLSContext?

    init(issuer: String, keys: [TestSigningKey], tls: TestCertificates? = nil) throws {
        self.issuer = issuer
        tlsContext = try tls.map { try TLSContext(certificateChainPath: $0.serverCertificate.path, privateKeyPath: $0.serverKey.path) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw TestFailure("JWKS server cannot listen: errno \(errno)")
        }
        listener = fd
        port = Socket.localPort(fd)
        publish(keys)
        Thread { [self] in acceptLoop() }.start()
    }

    var url: String { "\(tlsContext == nil ? "http" : "https")://127.0.0.1:\(port)/jwks.json" }
    var downloads: Int { state.withLock { $0.downloads } }

    /// What the next download serves.
    func publish(_ keys: [TestSigningKey]) {
        let document = TestSigningKey.jwks(keys)
        state.withLock { $0.document = document }
    }

    /// The `--oidc-issuer` value for this provider.
    func flag(audience: String) -> String { "issuer=\(issuer);audience=\(audience);jwks=\(url)" }

    func stop() {
        let first = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            Thread { [self] in serve(fd) }.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var tls: TLSStream?
        if let tlsContext {
            guard let stream = try? TLSStream(context: tlsContext, fd: fd), case .bytes = stream.handshake() else { return }
            tls = stream
        }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while pending.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            guard case .bytes(let count) = buffer.withUnsafeMutableBytes({ tls?.read(into: $0) ?? Socket.read(fd, into: $0) }) else { return }
            pending += buffer[0..<count]
        }
        let body = state.withLock { state in
            state.downloads += 1
            return state.document
        }
        let response = Array("HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        var sent = 0
        while sent < response.count {
            guard case .bytes(let count) = response[sent...].withUnsafeBytes({ tls?.write(from: $0) ?? Socket.write(fd, from: $0) }) else { return }
            sent += count
        }
        tls?.shutdown()
    }
}
