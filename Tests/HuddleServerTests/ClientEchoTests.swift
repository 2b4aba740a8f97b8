import ChildProcessExit
import HuddleClient
import HuddleProtocol
import HuddleWebSocket
import Testing

/// Our client against the real server's /echo: every frame length form, text and binary, with
/// and without permessage-deflate.
@Suite(.ownThread) struct ClientEchoTests {
    static let sizes = [0, 1, 125, 126, 127, 1000, 65535, 65536, 100_000, 1 << 20]

    @Test(arguments: [true, false])
    func echoesTextAndBinaryOfEverySize(compression: Bool) async throws {
        let server = try await ServerProcess(["--bench"])
        var options = ClientConnectionOptions()
        if !compression { options.compression = nil }
        let client = try BlockingWebSocketClient.connect(to: ClientURL("\(server.url)/echo"), options: options)
        #expect(client.extensions.contains { $0.hasPrefix("permessage-deflate") } == compression)
        for size in Self.sizes {
            let text = compressibleText(size)
            try client.send(text: text)
            #expect(try client.receive() == .text(text), "text of \(size) bytes")
            let binary = randomBytes(size)
            try client.send(binary: binary)
            #expect(try client.receive() == .binary(binary), "binary of \(size) bytes")
        }
        #expect(client.close() == .init(code: .normalClosure, reason: "", clean: true))
        #expect(try await server.stop() == 0)
    }

    /// Everything sent in one burst comes back whole and in order (corked writes, partial
    /// writes of a queue bigger than the socket buffer).
    @Test func pipelinedMessagesComeBackInOrder() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try BlockingWebSocketClient.connect(to: ClientURL("\(server.url)/echo"))
        let messages = (0..<300).map { index in compressibleText(index * 97 % 5000) + Array("#\(index)".utf8) }
        for message in messages { try client.send(text: message) }
        for message in messages {
            #expect(try client.receive() == .text(message))
        }
        client.close()
        #expect(try await server.stop() == 0)
    }

    @Test func pingIsAnsweredWithItsPayload() async throws {
        let server = try await ServerProcess(["--bench"])
        let client = try BlockingWebSocketClient.connect(to: ClientURL("\(server.url)/echo"))
        try client.ping(Array("are you there".utf8))
        #expect(try client.receive() == .pong(Array("are you there".utf8)))
        client.close()
        #expect(try await server.stop() == 0)
    }
}

/// JSON-like text that deflate shrinks, of exactly `count` bytes.
func compressibleText(_ count: Int) -> [UInt8] {
    let pattern = Array(#"{"channel":"general","text":"hello, world","seq":12345},"#.utf8)
    return (0..<count).map { pattern[$0 % pattern.count] }
}

/// Incompressible bytes, eight at a time (a debug build pays dearly per element).
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    let words = (0..<(count + 7) / 8).map { _ in generator.next() as UInt64 }
    return words.withUnsafeBytes { Array($0.prefix(count)) }
}
