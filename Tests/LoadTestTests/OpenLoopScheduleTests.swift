import ChildProcessExit
import Testing

@testable import huddle_loadtest

/// The open-loop schedule decides when every message is due, whatever the harness manages to
/// send: the basis of latency without coordinated omission.
@Suite(.ownThread) struct OpenLoopScheduleTests {
    @Test func oneStreamIsDueAtFixedIntervalsFromTheStart() {
        var schedule = OpenLoopSchedule(streams: 1, ratePerStream: 100, start: 1_000_000_000)
        #expect(schedule.due(at: 999_999_999).isEmpty)
        #expect(schedule.due(at: 1_000_000_000) == [.init(stream: 0, sequence: 0, intended: 1_000_000_000)])
        #expect(schedule.due(at: 1_005_000_000).isEmpty)
        let next = schedule.due(at: 1_030_000_000)
        #expect(next.map(\.sequence) == [1, 2, 3])
        #expect(next.map(\.intended) == [1_010_000_000, 1_020_000_000, 1_030_000_000])
    }

    @Test func aLateCallerGetsTheWholeBacklogWithTheTimesItWasDue() {
        var schedule = OpenLoopSchedule(streams: 1, ratePerStream: 1000, start: 0)
        let backlog = schedule.due(at: 1_000_000_000)  // a second late: 1001 messages at once
        #expect(backlog.count == 1001)
        #expect(backlog.last?.intended == 1_000_000_000)
        #expect(backlog[500].intended == 500_000_000)
    }

    @Test func streamsAreStaggeredEvenlyOverOneInterval() {
        var schedule = OpenLoopSchedule(streams: 4, ratePerStream: 1, start: 0)
        let first = schedule.due(at: 999_999_999)
        #expect(first.map(\.stream) == [0, 1, 2, 3])
        #expect(first.map(\.intended) == [0, 250_000_000, 500_000_000, 750_000_000])
        #expect(first.allSatisfy { $0.sequence == 0 })
        let second = schedule.due(at: 1_500_000_000)
        #expect(second.map(\.stream) == [0, 1, 2])
        #expect(second.allSatisfy { $0.sequence == 1 })
        #expect(schedule.issued == 7)
        #expect((0..<4).map(schedule.issued(stream:)) == [2, 2, 2, 1])
    }
}
