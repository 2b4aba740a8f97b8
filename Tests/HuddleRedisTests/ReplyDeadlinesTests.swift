import ChildProcessExit
@testable import HuddleRedis
import Testing

@Suite(.ownThread) struct ReplyDeadlinesTests {
    @Test func theOldestUnansweredCommandIsTimed() {
        var deadlines = ReplyDeadlines(timeout: 100)
        #expect(deadlines.overdue(now: 1_000) == nil)
        deadlines.issued(token: 1, blockingFor: 0)
        deadlines.written(now: 1_000)
        deadlines.issued(token: 2, blockingFor: 0)
        deadlines.written(now: 1_050)
        #expect(deadlines.overdue(now: 1_100) == nil)
        #expect(deadlines.overdue(now: 1_130) == 30)
        // The second could not be answered before the first: its clock starts at that answer.
        deadlines.answered(token: 1, now: 1_140)
        #expect(deadlines.overdue(now: 1_200) == nil)
        #expect(deadlines.overdue(now: 1_241) == 1)
        deadlines.answered(token: 2, now: 1_241)
        #expect(deadlines.overdue(now: 9_999) == nil)
    }

    @Test func aBlockingCommandIsAllowedItsBlockTime() {
        var deadlines = ReplyDeadlines(timeout: 100)
        deadlines.issued(token: 1, blockingFor: 5_000)
        deadlines.written(now: 0)
        deadlines.issued(token: 2, blockingFor: 0)
        deadlines.written(now: 10)
        #expect(deadlines.overdue(now: 5_100) == nil)
        #expect(deadlines.overdue(now: 5_101) == 1)
        deadlines.answered(token: 1, now: 5_050)
        #expect(deadlines.overdue(now: 5_150) == nil)
        #expect(deadlines.overdue(now: 5_151) == 1)
    }

    @Test func aCommandThatMayBlockForeverIsNeverOverdue() {
        var deadlines = ReplyDeadlines(timeout: 100)
        deadlines.issued(token: 1, blockingFor: .max)
        deadlines.written(now: 0)
        deadlines.issued(token: 2, blockingFor: 0)
        deadlines.written(now: 0)
        #expect(deadlines.overdue(now: .max - 1) == nil)
        deadlines.answered(token: 1, now: 1_000_000)
        #expect(deadlines.overdue(now: 1_000_101) == 1)
    }

    /// Issued in a turn that was then held up, a command goes out when the loop next finds the
    /// socket writable: the server's time starts there, and an answer's successor waits for
    /// its own write too.
    @Test func aCommandIsTimedFromItsWriteNotItsIssue() {
        var deadlines = ReplyDeadlines(timeout: 100)
        deadlines.issued(token: 1, blockingFor: 0)
        #expect(deadlines.overdue(now: 5_000) == nil)
        deadlines.written(now: 5_000)
        #expect(deadlines.overdue(now: 5_100) == nil)
        #expect(deadlines.overdue(now: 5_101) == 1)
        deadlines.issued(token: 2, blockingFor: 0)
        deadlines.answered(token: 1, now: 5_110)
        #expect(deadlines.overdue(now: 9_000) == nil)
        deadlines.written(now: 9_000)
        #expect(deadlines.overdue(now: 9_101) == 1)
    }

    @Test func manyAnsweredCommandsDoNotAccumulate() {
        var deadlines = ReplyDeadlines(timeout: 100)
        for token in 1...100_000 {
            deadlines.issued(token: token, blockingFor: 0)
            deadlines.written(now: Int64(token))
            deadlines.answered(token: token, now: Int64(token))
        }
        #expect(deadlines.overdue(now: 1_000_000) == nil)
        #expect(deadlines.storedCount <= 2_048)
    }
}
