import Glibc
import HuddleIO
import Testing

/// Timers: due order, repetition, cancellation. Each test proves "did not run" by order: a
/// cancelled timer is due before the one that stops the loop, so had it run it would be seen.
@Suite(.serialized) struct TimerTests {
    /// Waits (on this thread, before the loop runs) until `milliseconds` have passed, so that
    /// every timer scheduled that much ahead is due in the loop's first turn.
    private func letTimePass(_ milliseconds: Int64) {
        let start = MonotonicClock.milliseconds()
        while MonotonicClock.milliseconds() - start <= milliseconds { usleep(1_000) }
    }

    /// Timers scheduled this far apart keep their due order even if the scheduling thread is
    /// held up between two `schedule` calls (a loaded machine), short of that long.
    private static let gap: Int64 = 50

    @Test func timersDueInTheSameTurnRunEarliestFirst() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        var order: [String] = []
        loop.schedule(after: 3 * Self.gap) { order.append("late") }
        loop.schedule(after: Self.gap) { order.append("early") }
        loop.schedule(after: 2 * Self.gap) { order.append("middle") }
        loop.schedule(after: 3 * Self.gap) {
            order.append("late, scheduled last")
            loop.stop()
        }
        letTimePass(3 * Self.gap)
        #expect(runUntilStopped(loop))
        #expect(order == ["early", "middle", "late", "late, scheduled last"])
    }

    @Test func timersInDifferentTurnsRunInDueOrder() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        var order: [Int64] = []
        for step in [3, 1, 2, 0] as [Int64] {
            loop.schedule(after: step * Self.gap) {
                order.append(step)
                if step == 3 { loop.stop() }
            }
        }
        #expect(runUntilStopped(loop))
        #expect(order == [0, 1, 2, 3])
    }

    @Test func aTimerNeverRunsBeforeItIsDue() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let scheduledAt = MonotonicClock.milliseconds()
        var ranAt: Int64 = 0
        loop.schedule(after: 15) {
            ranAt = MonotonicClock.milliseconds()
            loop.stop()
        }
        #expect(runUntilStopped(loop))
        #expect(ranAt - scheduledAt >= 15)
    }

    @Test func aCancelledTimerDoesNotRun() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        var ran: [String] = []
        let cancelled = loop.schedule(after: 1) { ran.append("cancelled") }
        loop.schedule(after: 5) {
            ran.append("stop")
            loop.stop()
        }
        loop.cancelTimer(cancelled)
        #expect(runUntilStopped(loop))
        #expect(ran == ["stop"])
    }

    @Test func aTimerCancelledByAnotherDueInTheSameTurnDoesNotRun() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        var ran: [String] = []
        var victim = 0
        loop.schedule(after: 1) {
            ran.append("canceller")
            loop.cancelTimer(victim)
        }
        victim = loop.schedule(after: 2) { ran.append("victim") }
        loop.schedule(after: 3) {
            ran.append("stop")
            loop.stop()
        }
        letTimePass(3)
        #expect(runUntilStopped(loop))
        #expect(ran == ["canceller", "stop"])
    }

    @Test func aRepeatingTimerRepeatsUntilCancelled() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        var fired = 0
        var repeating = 0
        repeating = loop.schedule(after: 1, repeating: 1) {
            fired += 1
            guard fired == 3 else { return }
            loop.cancelTimer(repeating)
            // Due after many more periods: had the cancel failed, the repeats would come first.
            loop.schedule(after: 20) { loop.stop() }
        }
        #expect(runUntilStopped(loop))
        #expect(fired == 3)
    }
}
