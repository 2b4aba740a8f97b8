import HuddleIO

/// Runs `loop` on the calling thread until something stops it, or until `limit` milliseconds
/// pass (a hung test fails instead of hanging the suite). Returns false on the time limit.
func runUntilStopped(_ loop: EventLoop, limit: Int64 = 30_000) -> Bool {
    let timedOut = LoopBound(false, loop: loop)
    let watchdog = loop.schedule(after: limit) {
        timedOut.value = true
        loop.stop()
    }
    loop.run()
    loop.cancelTimer(watchdog)
    return !timedOut.value
}
