import ChildProcessExit
import Glibc
import HuddleClient
import HuddleProtocol
import HuddleIO
import HuddleWebSocket
import Synchronization
import Testing

/// Every way a client connection ends reaches the delegate once, with the right code.
@Suite(.ownThread) struct ClientCloseTests {
    @Test func closeHandshakeIs1000AndClean() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try BlockingWebSocketClient.connect(to: ClientURL("\(server.url)/echo"))
        try client.send(text: "last words")
        #expect(client.close() == .init(code: .normalClosure, reason: "", clean: true))
        // Messages that arrived before the close are still there, then the close.
        #expect(try client.receive() == .text(Array("last words".utf8)))
        #expect(throws: BlockingWebSocketClient.Failure.closed(.init(code: .normalClosure, reason: "", clean: true))) {
            try client.receive()
        }
        #expect(throws: BlockingWebSocketClient.Failure.self) { try client.send(text: "after close") }
        #expect(try await server.stop() == 0)
    }

    @Test func ourCodeIsEchoedByTheServer() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try BlockingWebSocketClient.connect(to: ClientURL("\(server.url)/echo"))
        let result = client.close(code: WebSocketCloseCode(rawValue: 4000), reason: "bye")
        #expect(result.code == WebSocketCloseCode(rawValue: 4000))
        #expect(result.clean)
        #expect(try await server.stop() == 0)
    }

    /// A code that may not be sent goes as a bodiless close frame; the server's bodiless echo
    /// reads as 1005.
    @Test func unsendableCodeClosesWithoutStatus() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try BlockingWebSocketClient.connect(to: ClientURL("\(server.url)/echo"))
        #expect(client.close(code: .abnormalClosure) == .init(code: .noStatusReceived, reason: "", clean: true))
        #expect(try await server.stop() == 0)
    }

    @Test func refusedUpgradeReportsTheHTTPStatus() async throws {
        let server = try await ServerProcess(["--bench"])
        let harness = try TestLoop()
        defer { harness.stop() }
        let delegate = RecordingDelegate()
        let url = try ClientURL("\(server.url)/nowhere")
        await harness.run {
            WebSocketClientConnection(url: url, loop: harness.loop, delegate: delegate).connect()
        }
        try await eventually { !delegate.closes.isEmpty }
        #expect(!delegate.opened)
        #expect(delegate.handshakeStatus == 404)
        let close = try #require(delegate.closes.first)
        #expect(close.code == nil)
        #expect(!close.clean)
        #expect(close.reason.hasPrefix("HTTP 404"), "\(close.reason)")
        #expect(try await server.stop() == 0)
    }

    @Test func refusedTCPConnectionIsReported() async throws {
        // A port that was just free: bind one, note it, close it.
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        let port = Socket.localPort(listener)
        _ = close(listener)
        do {
            _ = try BlockingWebSocketClient.connect(to: ClientURL("ws://127.0.0.1:\(port)/echo"))
            Issue.record("connected to a closed port")
        } catch BlockingWebSocketClient.Failure.closed(let result) {
            #expect(result.code == nil)
            #expect(result.reason.contains("Connection refused"), "\(result.reason)")
        }
    }

    /// A server that accepts TCP (the kernel does, into the backlog) but never answers.
    @Test func silentServerRunsIntoTheConnectTimeout() async throws {
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { _ = close(listener) }
        let started = ContinuousClock.now
        do {
            // The blocking client's timeout becomes the connection's connect timeout.
            _ = try BlockingWebSocketClient.connect(to: ClientURL("ws://127.0.0.1:\(Socket.localPort(listener))/echo"), timeout: 0.3)
            Issue.record("connected to a server that never answers")
        } catch BlockingWebSocketClient.Failure.closed(let result) {
            #expect(result.code == nil)
            #expect(result.reason.contains("within 300 ms"), "\(result.reason)")
        }
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    /// SIGTERM: the server says 1001 to everyone, each client echoes it and sees a clean close.
    @Test func serverShutdownGives1001ToEveryClient() async throws {
        let server = try await ServerProcess(["--bench"])
        let harness = try TestLoop()
        defer { harness.stop() }
        let url = try ClientURL("\(server.url)/broadcast")
        let delegates = (0..<100).map { _ in RecordingDelegate() }
        await harness.run {
            for delegate in delegates {
                WebSocketClientConnection(url: url, loop: harness.loop, delegate: delegate).connect()
            }
        }
        try await eventually { delegates.allSatisfy(\.opened) }
        #expect(try await server.stop() == 0)
        try await eventually { delegates.allSatisfy { !$0.closes.isEmpty } }
        for delegate in delegates {
            #expect(delegate.closes.count == 1)
            #expect(delegate.closes.first?.code == .goingAway)
            #expect(delegate.closes.first?.clean == true)
        }
    }
}
