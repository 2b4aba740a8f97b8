import ChildProcessExit
import HuddleIO
import Testing

@testable import huddle_loadtest

/// What counts toward a run's figures. The loop is never run: phases are driven by hand.
@Suite(.ownThread) struct MeasurementTests {
    private func measurement() throws -> Measurement {
        Measurement(
            loop: try EventLoop(index: 0), progress: Progress(quiet: true),
            settings: .init(warmupSeconds: 0, durationSeconds: nil, drainSeconds: 0, serverPID: nil))
    }

    @Test func latencyCountsMessagesIntendedInTheWindowWhereverTheyArrive() throws {
        let m = try measurement()
        let beforeWindow = MonotonicClock.nanoseconds()
        m.recordDelivery(intended: beforeWindow, at: beforeWindow + 1_000_000)  // set-up traffic: not measured
        m.begin(onMeasureEnd: {}, isDrained: { true })
        #expect(m.phase == .measure)
        let inWindow = MonotonicClock.nanoseconds()
        m.recordSent()
        m.recordDelivery(intended: beforeWindow, at: inWindow)  // intended before the window: throughput only
        m.recordDelivery(intended: inWindow, at: inWindow + 2_000_000)
        m.endMeasuring()
        #expect(m.phase == .drain)
        // Sent in the window, arrived during the drain: its (large) latency must count.
        m.recordDelivery(intended: inWindow, at: inWindow + 500_000_000)
        let result = m.result(scenario: "test", parameters: [:], latencyMeaning: "test", sent: 1, acknowledged: 1, stream: .init())
        #expect(result.latency.count == 2)
        #expect(result.latency.max >= 499)
        #expect(result.sent == 1)
        #expect(result.deliveriesPerSecond > 0)
        #expect(result.measureTo >= result.measureFrom)
    }

    @Test func failureReasonsAreBounded() throws {
        let m = try measurement()
        for index in 0..<(Measurement.maxFailureReasons + 10) { m.recordFailure("reason \(index)") }
        m.recordFailure("reason 0")
        #expect(m.failures.count == Measurement.maxFailureReasons + 1)
        #expect(m.failures["reason 0"] == 2)
        #expect(m.failures["other reasons"] == 10)
    }

    @Test func errorsAreKeptButBounded() throws {
        let m = try measurement()
        for index in 0..<100 { m.error("error \(index)") }
        #expect(m.errors.count == 20)
        #expect(m.errors.first == "error 0")
    }

    @Test func commandLinesAreQuotedForTheShell() {
        #expect(Measurement.shellQuoted("--rate") == "--rate")
        #expect(Measurement.shellQuoted("ws://127.0.0.1:9001/echo") == "ws://127.0.0.1:9001/echo")
        #expect(Measurement.shellQuoted("it's here") == "'it'\\''s here'")
        #expect(Measurement.shellQuoted("") == "''")
    }

    /// The 1,274 % sample: a few milliseconds of wall time (the last, partial second) against
    /// CPU counted in 10 ms clock ticks. CPU is over the time between the reads, never more
    /// than the cores can give, and not given at all over too short an interval.
    @Test func cpuIsBoundedByTheTimeBetweenReadsAndTheCores() {
        func sample(_ cpu: Double, at seconds: Double) -> ProcessSample {
            ProcessSample(cpuSeconds: cpu, rssKilobytes: 0, takenAt: UInt64(seconds * 1e9))
        }
        #expect(ProcessSample.cpuPercent(from: sample(10, at: 100), to: sample(10.64, at: 100.05), cores: 2) == nil)
        #expect(ProcessSample.cpuPercent(from: sample(10, at: 100), to: sample(11.5, at: 101), cores: 2) == 150)
        #expect(ProcessSample.cpuPercent(from: sample(10, at: 100), to: sample(12.74, at: 101), cores: 2) == 200)
        #expect(ProcessSample.cpuPercent(from: sample(10, at: 100), to: sample(9, at: 101), cores: 2) == 0)
        #expect(ProcessSample.cpuPercent(from: sample(10, at: 101), to: sample(11, at: 100), cores: 2) == nil)
        #expect(ProcessSample.cpuPercent(from: nil, to: sample(11, at: 101), cores: 2) == nil)
    }

    /// Ticks aim at the run's second boundaries, so lateness does not accumulate; a tick that
    /// comes seconds late says which seconds it covers instead of skipping them silently.
    @Test func lateTicksSayWhichSecondsTheyCover() {
        var ticks = SecondTicks(start: 5_000_000_000)
        #expect(ticks.millisecondsToNext(from: 5_000_000_000) == 1_000)
        #expect(ticks.close(at: 5_999_999_999) == nil)
        #expect(ticks.close(at: 6_003_000_000) == 1...1)
        #expect(ticks.millisecondsToNext(from: 6_003_000_000) == 997)  // aimed at 7 s, not 7.003 s
        #expect(ticks.close(at: 6_900_000_000) == nil)
        #expect(ticks.close(at: 9_200_000_000) == 2...4)
        #expect(ticks.close(at: 10_000_000_000) == 5...5)
        #expect(SecondTicks.label(2...4) == "2–4 s")
        #expect(SecondTicks.label(5...5) == "5 s")
    }

    @Test func progressLinesShowSetUpCountsAndLateSeconds() throws {
        let m = try measurement()
        let queue = SetupQueue(count: 1000, concurrency: 10, step: { index, done in if index < 120 { done(true) } }, completion: { _ in })
        m.track(queue, "sign-up")
        queue.run()
        let setup = SecondSample(t: 3, phase: "setup", sent: 0, delivered: 0, failed: 0, connections: 120)
        let line = m.progressLine(setup, covering: 3...3)
        #expect(line.hasPrefix("3 s setup: sign-up 120/1,000, 120 conns"), "\(line)")
        let late = SecondSample(t: 9, phase: "measure", sent: 50, delivered: 500, failed: 0, connections: 120, seconds: 3)
        let lateLine = m.progressLine(late, covering: 7...9)
        #expect(lateLine.hasPrefix("7–9 s measure (late: the harness's loop was busy; this line covers 3 s): sent 50/s"), "\(lateLine)")
        // The last moment of a run: no CPU figure, and no stray percent sign after its absence.
        let last = SecondSample(t: 9.1, phase: "drain", sent: 0, delivered: 0, failed: 0, connections: 120, harnessCPUPercent: 7, seconds: 0.1)
        #expect(m.progressLine(last, covering: nil).hasSuffix("CPU server n/a harness 7%"), "\(m.progressLine(last, covering: nil))")
    }

    @Test func anInterruptInTheWindowDrainsAndMarksTheResult() throws {
        let m = try measurement()
        var ended = false
        m.begin(onMeasureEnd: { ended = true }, isDrained: { false })
        m.interrupt(signal: "SIGINT")
        #expect(ended)
        #expect(m.phase == .drain)  // messages under way may still arrive
        m.interrupt(signal: "SIGINT")  // the second one skips the drain
        #expect(m.phase == .done)
        let result = m.result(scenario: "test", parameters: [:], latencyMeaning: "test", sent: 0, acknowledged: 0, stream: .init())
        #expect(result.interruption?.phase == "measure")
        #expect(result.exitStatus == 130)
        #expect(result.verdict == "interrupted (SIGINT during measure); clean so far")
    }
}
