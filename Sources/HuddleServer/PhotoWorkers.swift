import HuddleIO
import Synchronization

/// Threads for photo work that blocks: hashing up to `--max-photo-size` bytes, writing a file
/// with fsyncs, reading one back. On an I/O loop it would stall every connection of the loop,
/// on the core every user; and it has threads of its own rather than the password workers', so
/// a slow disk never delays a login. Jobs go round-robin.
final class PhotoWorkers: Sendable {
    private let loops: [EventLoop]
    private let threads: [LoopThread]
    private let next = Atomic<Int>(0)

    init(count: Int) throws {
        loops = try (0..<count).map { try EventLoop(index: $0, readBufferSize: 16) }
        threads = try loops.map { loop in try LoopThread.spawn(name: "huddle-photo-\(loop.index)") { loop.run() } }
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
