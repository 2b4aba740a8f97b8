import Glibc

/// CLOCK_MONOTONIC in milliseconds: the same scale as HuddleIO's `MonotonicClock.milliseconds()`,
/// so the server can pass its loop time to `WriteAheadLog.syncIfDue(now:)`.
enum MonotonicMilliseconds {
    static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
