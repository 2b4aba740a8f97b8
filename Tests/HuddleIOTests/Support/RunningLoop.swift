import Dispatch
import Glibc
import HuddleIO

/// An event loop on its own thread, for tests that drive loop-bound objects: `sync` runs a
/// closure on the loop's thread and waits for its result.
final class RunningLoop: @unchecked Sendable {
    let loop: EventLoop
    private let thread: LoopThread

    init() throws {
        let loop = try EventLoop(index: 0)
        self.loop = loop
        thread = try LoopThread.spawn(name: "test-loop") { loop.run() }
    }

    func sync<T>(_ body: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: T?
        nonisolated(unsafe) let body = body
        loop.execute {
            result = body()
            done.signal()
        }
        done.wait()
        return result!
    }

    /// Asks the loop, turn after turn, until `condition` holds; false if it did not within
    /// `seconds` (the loop is woken by the question itself, so a loaded machine only delays).
    func waitUntil(seconds: Double = 20, _ condition: @escaping () -> Bool) -> Bool {
        let deadline = DispatchTime.now() + seconds
        while DispatchTime.now() < deadline {
            if sync(condition) { return true }
            usleep(2_000)
        }
        return false
    }

    func stop() {
        loop.stop()
        thread.join()
    }
}
