import HuddleIO
import HuddleRedis

/// An event loop on its own thread for one test, stopped and joined by `stop()`.
public final class RunningLoop: Sendable {
    public let loop: EventLoop
    private let thread: LoopThread

    public init() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 4096)
        self.loop = loop
        thread = try LoopThread.spawn(name: "redis-test") { loop.run() }
    }

    public func stop() {
        loop.stop()
        thread.join()
    }
}

/// Runs `body` with `count` clients of `url` on a loop thread of their own, each connected
/// first; closes them and stops the loop afterwards, whatever `body` does.
public func withClients<Result>(
    _ count: Int = 1, of url: String, options: RedisClient.Options = .init(),
    _ body: ([RedisClient], RunningLoop) async throws -> Result
) async throws -> Result {
    let running = try RunningLoop()
    defer { running.stop() }
    let endpoint = try RedisEndpoint(url: url)
    let clients = (0..<count).map { _ in RedisClient(endpoint: endpoint, loop: running.loop, options: options) }
    defer { clients.forEach { $0.close() } }
    for client in clients { _ = try await client.waitUntilConnected(timeout: 10) }
    return try await body(clients, running)
}
