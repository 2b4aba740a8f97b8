import HuddleIO
import Testing

@testable import huddle_loadtest

/// What counts toward a run's figures. The loop is never run: phases are driven by hand.
@Suite struct MeasurementTests {
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
}
