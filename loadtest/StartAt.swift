import Glibc
import HuddleIO

/// `--start-at`: harness processes started side by side (each under its own descriptor limit)
/// begin their traffic at one wall-clock instant, so their measured windows coincide and their
/// figures add up: one run of many processes.
enum StartAt {
    /// Calls `then` on `loop` at `epochSeconds` (wall clock), or at once when it is nil. Set-up
    /// that ends after that time aborts the run: its window would no longer be the others'.
    static func wait(until epochSeconds: Double?, loop: EventLoop, measurement: Measurement, progress: Progress, then: @escaping () -> Void) {
        guard let epochSeconds else { return then() }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let delay = epochSeconds - (Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)
        guard delay >= 0 else {
            return measurement.abort("set-up ended \(formatted(-delay, decimals: 1)) s after --start-at: start the processes earlier or further apart")
        }
        progress.say("set-up done; starting at --start-at, in \(formatted(delay, decimals: 1)) s")
        loop.schedule(after: Int64((delay * 1000).rounded(.up))) { then() }
    }
}
