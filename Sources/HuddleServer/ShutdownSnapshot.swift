import Glibc
import HuddleIO
import HuddleStore
import Synchronization

/// The shutdown snapshot as the shutdown sees it: written on the snapshot thread, waited for
/// until the exit deadline at most, then given up (README, "Shutdown"). A snapshot only
/// shortens the next start's replay, so giving it up loses nothing; waiting for it held the
/// exit for as long as the state took to encode (18 s in `bench/drain_restarts.py`).
final class ShutdownSnapshot: Sendable {
    private let givenUp = Atomic(false)
    private let outcome = Mutex<Result<SnapshotWriteResult, any Error>?>(nil)

    /// Asked by the writer between its steps; false once the shutdown stopped waiting.
    var continuing: Bool { !givenUp.load(ordering: .acquiring) }

    /// The writer's end (snapshot thread).
    func finish(_ result: Result<SnapshotWriteResult, any Error>) {
        outcome.withLock { $0 = result }
    }

    /// The shutdown's end: the outcome once there is one, or nil when `deadline` (monotonic ms)
    /// passed first, after which the writer is told to stop. Polls: a shutdown waits once, and
    /// 2 ms is nothing beside the budget.
    func wait(until deadline: Int64) -> Result<SnapshotWriteResult, any Error>? {
        while true {
            if let result = outcome.withLock({ $0 }) { return result }
            if MonotonicClock.milliseconds() >= deadline {
                givenUp.store(true, ordering: .releasing)
                // It may have finished meanwhile: a complete snapshot is worth taking.
                return outcome.withLock { $0 }
            }
            var pause = timespec(tv_sec: 0, tv_nsec: 2_000_000)
            nanosleep(&pause, nil)
        }
    }
}
