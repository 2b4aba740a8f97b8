import HuddleIO
import Synchronization

/// A few dedicated threads for work that blocks: PBKDF2 (slow on purpose: hundreds of
/// milliseconds at production cost) and photo files (hashing up to `--max-photo-size` bytes,
/// writing with fsyncs, reading back). On an I/O loop such a job would stall every connection
/// of the loop, on the core every user. Each kind of work gets a pool of its own, so a slow
/// disk never delays a login. Jobs go round-robin.
final class WorkerThreads: Sendable {
    private let loops: [EventLoop]
    private let threads: [LoopThread]
    private let next = Atomic<Int>(0)

    /// `name` prefixes the threads' names (`huddle-kdf-0`, …), as `top -H` shows them.
    init(name: String, count: Int) throws {
        loops = try (0..<count).map { try EventLoop(index: $0, readBufferSize: 16) }
        threads = try loops.map { loop in try LoopThread.spawn(name: "\(name)-\(loop.index)") { loop.run() } }
    }

    func run(_ job: @escaping @Sendable () -> Void) {
        let index = next.add(1, ordering: .relaxed).newValue % loops.count
        loops[index].execute(job)
    }

    func stop() {
        for loop in loops { loop.stop() }
        for thread in threads { thread.join() }
    }
}
