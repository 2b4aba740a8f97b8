import Synchronization
import HuddleIO

/// Threads for password hashing. PBKDF2 is slow on purpose (hundreds of milliseconds at
/// production cost); on an I/O loop it would stall every connection of the loop, on the core
/// every user. Jobs go round-robin to a few dedicated threads.
final class PasswordWorkers: Sendable {
    private let loops: [EventLoop]
    private let threads: [LoopThread]
    private let next = Atomic<Int>(0)

    init(count: Int) throws {
        loops = try (0..<count).map { try EventLoop(index: $0, readBufferSize: 16) }
        threads = try loops.map { loop in try LoopThread.spawn(name: "huddle-kdf-\(loop.index)") { loop.run() } }
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
