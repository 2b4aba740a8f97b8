import Foundation
import HuddleWebSocket
import Testing

/// TLS 1.3 key updates on a wss:// connection whose server cannot write: the client asks for
/// one while megabytes of echoes wait for it in the server's send buffer and queue. OpenSSL
/// answers with the server's next write, so the answer itself waits for writability, and a
/// read behind it with it (HuddleIO's `Transport` retries each on the readiness it waits for).
@Suite struct TLSKeyUpdateTests {
    @Test func keyUpdateAskedWhileTheServerCannotWriteIsAnswered() async throws {
        let certificates = try TestCertificates.shared.get()
        let server = try await ServerProcess(["--bench"], tls: certificates)
        let client = try RawClient(port: server.tlsPort!, receiveTimeout: 20)
        try client.startTLS()
        try client.upgrade(path: "/echo")
        // 8 MiB echoed to a client that reads nothing yet: more than the socket buffers hold.
        let messages = (0..<8).map { [UInt8](repeating: UInt8(0x61 + $0), count: 1 << 20) }
        for message in messages { try client.sendFrame(.binary, message) }
        try client.requestKeyUpdate()
        let after = Array("after the key update".utf8)
        try client.sendFrame(.text, after)
        for message in messages { #expect(try client.nextEvent() == .binary(message)) }
        #expect(try client.nextEvent() == .text(after))
        // Both directions on their new keys.
        try client.sendFrame(.text, Array("again".utf8))
        #expect(try client.nextEvent() == .text(Array("again".utf8)))
        try client.sendFrame(.close, WebSocketFrameWriter.closePayload(code: .normalClosure, reason: ""))
        #expect(try client.readCloseCode() == .normalClosure)
        #expect(try await server.stop() == 0)
    }
}
