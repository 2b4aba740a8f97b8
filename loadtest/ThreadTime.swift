import Glibc
import HuddleIO

/// Where the calling thread's time went over a stretch of work: on a core, or runnable and
/// waiting for one (`/proc/thread-self/schedstat`: nanoseconds run, nanoseconds waited on the run
/// queue). A loop turn that takes seconds is then told apart from one that was slow in itself:
/// on a box with more runnable threads than cores, a turn's wall time is mostly waiting.
struct ThreadTime: Sendable {
    var wallNanoseconds: UInt64
    var runNanoseconds: UInt64
    var waitNanoseconds: UInt64

    /// Now, for the calling thread; run and wait stay 0 where the kernel keeps no schedstat.
    static func now() -> ThreadTime {
        let fields = ProcFile.read("/proc/thread-self/schedstat")?.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { UInt64($0) } ?? []
        return ThreadTime(
            wallNanoseconds: MonotonicClock.nanoseconds(),
            runNanoseconds: fields.count >= 2 ? fields[0] : 0, waitNanoseconds: fields.count >= 2 ? fields[1] : 0)
    }

    /// What passed from `start` to `self`.
    func since(_ start: ThreadTime) -> ThreadTime {
        ThreadTime(
            wallNanoseconds: wallNanoseconds &- start.wallNanoseconds, runNanoseconds: runNanoseconds &- start.runNanoseconds,
            waitNanoseconds: waitNanoseconds &- start.waitNanoseconds)
    }

    var wallSeconds: Double { Double(wallNanoseconds) / 1e9 }
    var runSeconds: Double { Double(runNanoseconds) / 1e9 }
    var waitSeconds: Double { Double(waitNanoseconds) / 1e9 }
}
