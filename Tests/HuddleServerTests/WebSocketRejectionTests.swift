import ChildProcessExit
import Foundation
import HuddleWebSocket
import Testing

/// Every way a connected peer can misbehave, each answered with its close code.
@Suite(.ownThread) struct WebSocketRejectionTests {
    @Test func unmaskedFrameIs1002() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try RawClient(port: server.port)
        try client.upgrade(path: "/echo")
        try client.sendFrame(.text, Array("hello".utf8), masked: false)
        #expect(try client.readCloseCode() == .protocolError)
        #expect(client.waitForEOF())
    }

    @Test func oversizeMessageIs1009() async throws {
        let server = try await ServerProcess(["--bench", "--max-message-size", "1000"])
        let client = try RawClient(port: server.port)
        try client.upgrade(path: "/echo")
        try client.sendFrame(.binary, [UInt8](repeating: 7, count: 999))
        #expect(try client.nextEvent() == .binary([UInt8](repeating: 7, count: 999)))
        // Two fragments that only together exceed the limit.
        try client.sendFrame(.binary, [UInt8](repeating: 1, count: 600), fin: false)
        try client.sendFrame(.continuation, [UInt8](repeating: 1, count: 600))
        #expect(try client.readCloseCode() == .messageTooBig)
    }

    @Test func invalidUTF8Is1007() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try RawClient(port: server.port)
        try client.upgrade(path: "/echo")
        try client.sendFrame(.text, [0x68, 0x69, 0xC0, 0xAF])  // "hi" + an overlong "/"
        #expect(try client.readCloseCode() == .invalidPayloadData)
    }

    @Test func inflateBombIs1009() async throws {
        let server = try await ServerProcess(["--bench", "--max-message-size", "1048576"])
        let client = try RawClient(port: server.port)
        let response = try client.upgrade(path: "/echo", extraHeaders: ["Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"])
        #expect(response.headers["sec-websocket-extensions"]?.hasPrefix("permessage-deflate") == true)
        // 64 MiB of zeros deflate to ~64 KiB: small on the wire, far over the limit once inflated.
        let zeros = [UInt8](repeating: 0, count: 64 << 20)
        let bomb = PerMessageDeflater(windowBits: 15, noContextTakeover: true).compress(zeros)
        #expect(bomb.count < 1 << 20)
        try client.sendFrame(.binary, bomb, rsv1: true)
        #expect(try client.readCloseCode() == .messageTooBig)
    }

    @Test func slowReaderIsClosedWith1008() async throws {
        let server = try await ServerProcess(["--bench", "--max-outbound-bytes", "65536"])
        let slow = try RawClient(port: server.port, receiveTimeout: 20, receiveBufferSize: 4096)
        try slow.upgrade(path: "/broadcast")
        let publisher = try RawClient(port: server.port)
        try publisher.upgrade(path: "/broadcast")
        // Well over the socket buffers plus the queue limit; the slow client reads nothing.
        let message = [UInt8](repeating: 0x61, count: 32 * 1024)
        for _ in 0..<250 {  // 8 MiB: loopback send buffers autotune up to 4 MiB
            try publisher.sendFrame(.binary, message)
            _ = try publisher.nextEvent()  // the publisher gets its own copy and keeps up
        }
        try await server.waitForLog("closing slow consumer", timeout: 10)
        // What was already in the socket buffers arrives, then the close frame with 1008.
        #expect(try slow.readCloseCode() == .policyViolation)
        #expect(slow.waitForEOF())
    }

    @Test func silentPeerIsPingedThenClosed() async throws {
        let server = try await ServerProcess(["--bench", "--ping-interval", "1", "--idle-timeout", "3"])
        let client = try RawClient(port: server.port)
        try client.upgrade(path: "/echo")
        let started = Date.now
        #expect(try client.nextEvent() == .ping([]))
        #expect(try client.readCloseCode() == .policyViolation)
        let elapsed = Date.now.timeIntervalSince(started)
        #expect(elapsed > 2 && elapsed < 6, "closed after \(elapsed) s")
        #expect(client.waitForEOF())
    }

    /// A quiet peer gets a ping per interval, not one at every sweep of the loop (4 a second):
    /// with a 1 s interval, 2 or 3 pings before the idle timeout closes it at 3 s.
    @Test func silentPeerIsPingedOncePerInterval() async throws {
        let server = try await ServerProcess(["--bench", "--ping-interval", "1", "--idle-timeout", "3"])
        let client = try RawClient(port: server.port)
        try client.upgrade(path: "/echo")
        var pings = 0
        var closeCode: WebSocketCloseCode?
        while let event = try client.nextEvent() {
            if case .ping = event { pings += 1 }
            if case .close(let code, _) = event {
                closeCode = code
                break
            }
        }
        #expect(closeCode == .policyViolation)
        #expect((1...3).contains(pings), "\(pings) pings in the 3 s before the idle timeout")
    }

    @Test func peerAnsweringPingsStaysConnected() async throws {
        let server = try await ServerProcess(["--bench", "--ping-interval", "1", "--idle-timeout", "3"])
        let client = try RawClient(port: server.port)
        try client.upgrade(path: "/echo")
        for _ in 0..<4 {
            #expect(try client.nextEvent() == .ping([]))
            try client.sendFrame(.pong, [])
        }
        try client.sendFrame(.text, Array("still here".utf8))
        #expect(try client.nextEvent() == .text(Array("still here".utf8)))
    }

    @Test func closeHandshakeEchoesTheCode() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try RawClient(port: server.port)
        try client.upgrade(path: "/echo")
        try client.sendFrame(.close, WebSocketFrameWriter.closePayload(code: .normalClosure, reason: "bye"))
        #expect(try client.readCloseCode() == .normalClosure)
        #expect(client.waitForEOF())
    }

    @Test func gracefulShutdownSends1001AndExitsZero() async throws {
        let server = try await ServerProcess(["--bench"])
        let clients = try (0..<5).map { _ in try RawClient(port: server.port) }
        for client in clients { try client.upgrade(path: "/echo") }
        server.process.interrupt()  // SIGINT
        for client in clients {
            #expect(try client.readCloseCode() == .goingAway)
            try client.sendFrame(.close, WebSocketFrameWriter.closePayload(code: .goingAway, reason: ""))
        }
        #expect(try await server.stop() == 0)
        try await server.waitForLog("stopped")
    }
}
