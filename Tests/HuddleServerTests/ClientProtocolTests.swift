import ChildProcessExit
import Foundation
import HuddleClient
import HuddleProtocol
import HuddleIO
import HuddleWebSocket
import Synchronization
import Testing

/// What our server never does but others might: a scripted server tells the client exactly
/// what to parse, and records what the client answered.
@Suite(.ownThread) struct ClientProtocolTests {
    @Test func wrongAcceptValueFailsTheHandshake() async throws {
        let server = try ScriptedServer { _ in
            Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n".utf8)
        }
        let result = try await connectAndWaitForClose(port: server.port)
        #expect(result.code == nil)
        #expect(result.reason.contains("Sec-WebSocket-Accept"), "\(result.reason)")
        withExtendedLifetime(server) {}
    }

    @Test func unofferedExtensionFailsTheHandshake() async throws {
        let server = try ScriptedServer { key in
            switchingProtocols(key: key, extra: "Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n")
        }
        let result = try await connectAndWaitForClose(port: server.port)
        #expect(result.code == nil)
        #expect(result.reason.contains("x-webkit-deflate-frame"), "\(result.reason)")
        withExtendedLifetime(server) {}
    }

    /// Frames in the same packet as the 101 are read, and a server-initiated close is echoed.
    @Test func framesRightBehindThe101AndAServerClose() async throws {
        let server = try ScriptedServer { key in
            switchingProtocols(key: key)
                + WebSocketFrameWriter.frame(opcode: .text, payload: Array("hi".utf8))
                + WebSocketFrameWriter.frame(opcode: .ping, payload: Array("p".utf8))
                + WebSocketFrameWriter.frame(opcode: .close, payload: WebSocketFrameWriter.closePayload(code: .tryAgainLater, reason: "busy"))
        }
        let delegate = RecordingDelegate()
        let result = try await connectAndWaitForClose(port: server.port, delegate: delegate)
        #expect(delegate.received == [.text(Array("hi".utf8))])
        #expect(result == .init(code: .tryAgainLater, reason: "busy", clean: true))
        let answers = try server.clientEvents()
        #expect(answers == [.pong(Array("p".utf8)), .close(.tryAgainLater, reason: "")])
    }

    /// A masked frame from a server is a protocol error: the client fails with 1002 and says so.
    @Test func maskedServerFrameIs1002() async throws {
        let server = try ScriptedServer { key in
            switchingProtocols(key: key) + WebSocketFrameWriter.frame(opcode: .text, payload: Array("x".utf8), maskingKey: 0x0102_0304)
        }
        let result = try await connectAndWaitForClose(port: server.port, closeTimeout: 300)
        #expect(result.code == .protocolError)
        #expect(!result.clean)
        let answers = try server.clientEvents()
        guard case .close(let code, _) = answers.first else {
            Issue.record("no close frame from the client: \(answers)")
            return
        }
        #expect(code == .protocolError)
    }

    private func connectAndWaitForClose(
        port: Int, delegate: RecordingDelegate = RecordingDelegate(), closeTimeout: Int64 = 3_000
    ) async throws -> BlockingWebSocketClient.CloseResult {
        let harness = try TestLoop()
        defer { harness.stop() }
        let url = try ClientURL("ws://127.0.0.1:\(port)/")
        var options = ClientConnectionOptions()
        options.closeTimeoutMilliseconds = closeTimeout
        await harness.run { [options] in
            WebSocketClientConnection(url: url, loop: harness.loop, options: options, delegate: delegate).connect()
        }
        try await eventually { !delegate.closes.isEmpty }
        return delegate.closes[0]
    }
}

private func switchingProtocols(key: String, extra: String = "") -> [UInt8] {
    Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: key))\r\n\(extra)\r\n".utf8)
}

/// Accepts one connection on a blocking socket, reads the upgrade request, writes what
/// `respond` makes of its key in one write, then records everything the client sends until
/// EOF (or 5 s of silence).
private final class ScriptedServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let recorded = Recording()

    private final class Recording: Sendable {
        let bytes = Mutex<[UInt8]?>(nil)
    }

    init(respond: @escaping @Sendable (_ key: String) -> [UInt8]) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 1) == 0 else {
            close(listener)
            throw TestFailure("cannot listen: errno \(errno)")
        }
        port = Socket.localPort(listener)
        let recorded = self.recorded
        Thread {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var input: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while input.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
                let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                input += buffer[..<count]
            }
            let head = String(decoding: input, as: UTF8.self)
            let key = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                .map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
            let response = respond(key)
            _ = response.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var frames: [UInt8] = []
            if let end = input.firstRange(of: Array("\r\n\r\n".utf8)) { frames += input[end.upperBound...] }
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                frames += buffer[..<count]
            }
            close(client)
            recorded.bytes.withLock { $0 = frames }
        }.start()
    }

    deinit { close(listener) }

    /// The frames the client sent, decoded, once it closed its side.
    func clientEvents() throws -> [WebSocketEvent] {
        let deadline = Date().addingTimeInterval(10)
        while recorded.bytes.withLock({ $0 }) == nil {
            guard Date() < deadline else { throw TestFailure("the client never closed its side") }
            usleep(10_000)
        }
        var reader = WebSocketMessageReader(role: .server, maxMessageSize: 1 << 20)
        var events: [WebSocketEvent] = []
        let bytes = recorded.bytes.withLock { $0 } ?? []
        try bytes.withUnsafeBytes { raw in try reader.read(raw) { events.append($0) } }
        return events
    }
}
