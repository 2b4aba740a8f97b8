/// How a repeating deadline sweep tells that its own loop was held up (a long turn, a stopped
/// or suspended process such as a phone app in the background, a write blocked on a busy disk).
///
/// The loop reads what the peers sent during the hold before its timers run, so an answer
/// already in the socket is taken (`EventLoop`); but a hold also swallows time the peer never
/// had: a request or an upgrade issued before it leaves only when the loop resumes, at the end
/// of the turn whose sweep would judge it, and every reconnect delay that ran out during it
/// would retry in that one turn. A deadline bounds the peer's time, not ours: a sweep that finds
/// itself late moves its deadlines on by the time lost and judges them on its next run, once
/// what was held has gone out, and waiting clients keep their spread. That next run judges however
/// late it is: a loop merely slow at every turn (a saturated load generator) is not held up
/// once but late every time, and must still time out what its peers never answered.
struct SweepLateness {
    /// How often the sweep runs: being this much later than that is still on time.
    let interval: Int64
    /// When the sweep last ran (monotonic ms).
    private var lastRun: Int64 = 0
    /// The last run found the loop held up and moved the deadlines on.
    private var postponedLastRun = false

    init(interval: Int64) {
        self.interval = interval
    }

    /// The sweep's timer starts at `now`.
    mutating func started(at now: Int64) {
        lastRun = now
        postponedLastRun = false
    }

    /// The sweep runs at `now`: how long its loop was held up, when more than one interval
    /// beyond the schedule and the last run judged (deadlines move on by that much and wait for
    /// the next run), else nil (judge them now).
    mutating func heldUp(at now: Int64) -> Int64? {
        let late = now - lastRun - interval
        lastRun = now
        postponedLastRun = late > interval && !postponedLastRun
        return postponedLastRun ? late : nil
    }
}
