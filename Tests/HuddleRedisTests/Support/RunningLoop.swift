import HuddleIO

/// An event loop on its own thread for one test, stopped and joined by `stop()`.
final class RunningLoop: Sendable {
    let loop: EventLoop
    private let thread: LoopThread

    init() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 4096)
        self.loop = loop
        thread = try LoopThread.spawn(name: "redis-test") { loop.run() }
    }

    func stop() {
        loop.stop()
        thread.join()
    }
}
