import Glibc
import HuddleIO

/// The thread a `HuddleClient` lives on, as its application sees it: the client and all its
/// callbacks run there; the application runs it, hands it work from other threads, sets timers
/// on it and has it read an input on the side. Many clients can share one.
public final class ClientRunLoop: Sendable {
    package let eventLoop: EventLoop

    /// A loop of its own: run it on the thread that is to own its clients.
    public convenience init() throws {
        self.init(try EventLoop(index: 0, readBufferSize: 64 * 1024))
    }

    /// Clients on a loop that also drives other connections (tests, benchmarks).
    package init(_ eventLoop: EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Runs the loop on the calling thread until `stop()`. Before that, the calling thread
    /// owns what lives on the loop: it may set up clients and start them.
    public func run() { eventLoop.run() }

    /// Makes `run()` return after the current turn; callable from any thread.
    public func stop() { eventLoop.stop() }

    /// Queues `work` to run on the loop's thread; callable from any thread.
    public func execute(_ work: @escaping @Sendable () -> Void) { eventLoop.execute(work) }

    /// Runs `work` on the loop after `milliseconds`; only on the loop's thread.
    public func schedule(after milliseconds: Int64, _ work: @escaping () -> Void) {
        eventLoop.schedule(after: milliseconds, work)
    }

    /// Monotonic milliseconds, the clock of `schedule(after:)` and of the client's timeouts.
    public static func milliseconds() -> Int64 { MonotonicClock.milliseconds() }

    /// Reads `fd` on a thread of its own and hands each chunk to `received` on the loop, then
    /// calls `ended` there once at end of input (or on a read error). A thread rather than the
    /// loop's epoll: standard input may be a regular file (`huddle-chat < script`), which epoll
    /// refuses. Call on the loop's thread, or before `run()`.
    public func readInput(from fd: Int32, received: @escaping ([UInt8]) -> Void, ended: @escaping () -> Void) throws {
        let handlers = LoopBound((received: received, ended: ended), loop: eventLoop)
        _ = try LoopThread.spawn(name: "client-input") {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    let chunk = Array(buffer[0..<count])
                    handlers.execute { $0.received(chunk) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    handlers.execute { $0.ended() }
                    return
                }
            }
        }
    }
}
