import Glibc

/// Milliseconds since the Unix epoch: the "server time" stamped on publications and events.
/// Timeouts never use it (see `MonotonicClock`); the core receives it as an input.
public enum WallClock {
    public static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
