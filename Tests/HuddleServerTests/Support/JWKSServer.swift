import Foundation
import HuddleIO
import JWTTestSupport
import Synchronization

/// A test identity provider: it serves the JWKS of signing keys the test made, over http (or
/// https with the test CA's certificate) on a free loopback port; the test may change the set
/// (a key rotation). Counts the downloads. Call `stop()` when done.
final class JWKSServer: Sendable {
    let issuer: String
    private let listener: LoopbackListener
    private let state: Mutex<(document: String, downloads: Int)>
    private let secure: Bool

    init(issuer: String, keys: [TestSigningKey], tls: TestCertificates? = nil) throws {
        self.issuer = issuer
        secure = tls != nil
        state = Mutex((document: TestSigningKey.jwks(keys), downloads: 0))
        listener = try LoopbackListener(tls: tls.map { try TLSContext(certificateChainPath: $0.serverCertificate.path, privateKeyPath: $0.serverKey.path) })
        listener.start { [self] peer in
            guard peer.receiveHead() != nil else { return }
            let body = state.withLock { state in
                state.downloads += 1
                return state.document
            }
            peer.send(Array("HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
        }
    }

    var url: String { "\(secure ? "https" : "http")://127.0.0.1:\(listener.port)/jwks.json" }
    var downloads: Int { state.withLock { $0.downloads } }

    /// What the next download serves.
    func publish(_ keys: [TestSigningKey]) {
        let document = TestSigningKey.jwks(keys)
        state.withLock { $0.document = document }
    }

    /// The `--oidc-issuer` value for this provider.
    func flag(audience: String) -> String { "issuer=\(issuer);audience=\(audience);jwks=\(url)" }

    func stop() { listener.stop() }
}
