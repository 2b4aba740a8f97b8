import ChildProcessExit
import Foundation
import Testing

/// Plain HTTP on the WebSocket port: health check and every handshake refusal.
@Suite(.ownThread) struct HTTPEndpointTests {
    @Test func healthzAnswers200() async throws {
        let server = try await ServerProcess([])
        let client = try RawClient(port: server.port)
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.body == "ok\n")
    }

    @Test func unknownPathIs404() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try RawClient(port: server.port)
        try client.send("GET /nowhere HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(try client.readResponse().status == 404)
        #expect(client.waitForEOF())
    }

    @Test func benchEndpointsAreOffByDefault() async throws {
        let server = try await ServerProcess([])
        let client = try RawClient(port: server.port)
        try client.send("GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(try client.readResponse().status == 404)
    }

    @Test func garbageIs400() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try RawClient(port: server.port)
        try client.send("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}\u{fc}\u{03}\u{03} not http at all\r\n\r\n")
        #expect(try client.readResponse().status == 400)
        #expect(client.waitForEOF())
    }

    @Test(arguments: [
        ("Sec-WebSocket-Version: 8\r\n", "wrong version"),
        ("", "missing version"),
    ])
    func wrongOrMissingVersionIs426(versionHeader: String, label: String) async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try RawClient(port: server.port)
        try client.send("GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\(versionHeader)\r\n")
        let response = try client.readResponse()
        #expect(response.status == 426, "\(label)")
        #expect(response.headers["sec-websocket-version"] == "13", "\(label)")
    }

    @Test func badKeyIs400() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try RawClient(port: server.port)
        try client.send("GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(try client.readResponse().status == 400)
    }

    @Test func oversizedHeadIs431() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try RawClient(port: server.port)
        try client.send("GET /echo HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "a", count: 20_000))\r\n\r\n")
        #expect(try client.readResponse().status == 431)
        #expect(client.waitForEOF())
    }

    @Test func silentClientGets408AfterHandshakeTimeout() async throws {
        let server = try await ServerProcess(["--bench", "--handshake-timeout", "1"])
        let client = try RawClient(port: server.port, receiveTimeout: 5)
        try client.send("GET /echo HTTP/1.1\r\n")  // and then nothing
        let started = Date.now
        #expect(try client.readResponse().status == 408)
        #expect(Date.now.timeIntervalSince(started) < 3)
        try await server.waitForLog("HTTP handshake timeout")
    }

    @Test func silentTLSClientIsDroppedAfterHandshakeTimeout() async throws {
        let server = try await ServerProcess(["--bench", "--handshake-timeout", "1"], tls: try TestCertificates.shared.get())
        let client = try RawClient(port: server.tlsPort!, receiveTimeout: 5)
        let started = Date.now
        #expect(client.waitForEOF())
        #expect(Date.now.timeIntervalSince(started) < 3)
        try await server.waitForLog("TLS handshake timeout")
    }
}
