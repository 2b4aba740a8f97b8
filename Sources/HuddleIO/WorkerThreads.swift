import Synchronization

/// A few dedicated threads for work that blocks: PBKDF2 (slow on purpose: hundreds of
/// milliseconds at production cost) and photo files (hashing up to `--max-photo-size` bytes,
/// writing with fsyncs, reading back). On an I/O loop such a job would stall every connection
/// of the loop, on the core every user. Each kind of work gets a pool of its own, so a slow
/// disk never delays a login. Jobs go round-robin.
public final class WorkerThreads: Sendable {
    private let loops: [EventLoop]
    private let threads: [LoopThread]
    private let next = Atomic<Int>(0)
    /// Set by `stop`: jobs still queued then are skipped, not run.
    private let stopping = Atomic(false)

    /// `name` prefixes the threads' names (`huddle-kdf-0`, …), as `top -H` shows them.
    public init(name: String, count: Int) throws {
        loops = try (0..<count).map { try EventLoop(index: $0, readBufferSize: 16) }
        threads = try loops.map { loop in try LoopThread.spawn(name: "\(name)-\(loop.index)") { loop.run() } }
    }

    public func run(_ job: @escaping @Sendable () -> Void) {
        let index = next.add(1, ordering: .relaxed).newValue % loops.count
        loops[index].execute { [self] in
            guard !stopping.load(ordering: .acquiring) else { return }
            job()
        }
    }

    /// At shutdown, after the core and the I/O loops have stopped, so no one waits for a result
    /// any more: each thread finishes the job it is running, and the queued ones are dropped —
    /// run, a queue of logins or uploads would hold the exit for seconds (README, "Shutdown").
    public func stop() {
        stopping.store(true, ordering: .releasing)
        for loop in loops { loop.stop() }
        for thread in threads { thread.join() }
    }
}
