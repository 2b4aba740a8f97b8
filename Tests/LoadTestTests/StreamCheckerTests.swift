import ChildProcessExit
import Testing

@testable import huddle_loadtest

/// The harness's delivery check must catch every way a stream can go wrong.
@Suite(.ownThread) struct StreamCheckerTests {
    @Test func cleanStreamsCountNothingWrong() {
        var checker = StreamChecker(receivers: 2, publishers: 2)
        for sequence in 0..<100 {
            for receiver in 0..<2 {
                for publisher in 0..<2 { checker.observe(receiver: receiver, publisher: publisher, sequence: sequence) }
            }
        }
        #expect(checker.counts == .init(delivered: 400))
        #expect(checker.missing(sentPerPublisher: [100, 100]) == 0)
    }

    @Test func detectsAnInjectedGap() {
        var checker = StreamChecker(receivers: 1, publishers: 1)
        for sequence in [0, 1, 2, 5, 6] { checker.observe(receiver: 0, publisher: 0, sequence: sequence) }
        #expect(checker.counts.gaps == 1)
        #expect(checker.missing(sentPerPublisher: [7]) == 2)  // 3 and 4 never came
    }

    @Test func detectsAnInjectedDuplicate() {
        var checker = StreamChecker(receivers: 1, publishers: 1)
        for sequence in [0, 1, 2, 2, 3] { checker.observe(receiver: 0, publisher: 0, sequence: sequence) }
        #expect(checker.counts.duplicates == 1)
        #expect(checker.counts.gaps == 0)
        #expect(checker.missing(sentPerPublisher: [4]) == 0)
    }

    @Test func detectsReorderingAndDoesNotCallItLoss() {
        var checker = StreamChecker(receivers: 1, publishers: 1)
        for sequence in [0, 2, 1, 3] { checker.observe(receiver: 0, publisher: 0, sequence: sequence) }
        #expect(checker.counts.reordered == 1)
        #expect(checker.counts.duplicates == 0)
        #expect(checker.missing(sentPerPublisher: [4]) == 0)
    }

    @Test func messagesNeverReceivedAtTheEndAreMissing() {
        var checker = StreamChecker(receivers: 2, publishers: 1)
        for sequence in 0..<10 { checker.observe(receiver: 0, publisher: 0, sequence: sequence) }
        for sequence in 0..<7 { checker.observe(receiver: 1, publisher: 0, sequence: sequence) }
        #expect(checker.missing(sentPerPublisher: [10]) == 3)
    }
}

/// The stream-keyed form the chat and reconnect scenarios use, and the bounds of its bookkeeping.
@Suite(.ownThread) struct StreamCheckerStreamTests {
    @Test func streamsAreIndependent() {
        var checker = StreamChecker(streams: 3)
        for sequence in 0..<5 { checker.observe(stream: 0, sequence: sequence) }
        for sequence in [0, 1, 3] { checker.observe(stream: 1, sequence: sequence) }
        for sequence in [0, 0] { checker.observe(stream: 2, sequence: sequence) }
        #expect(checker.counts == .init(delivered: 10, gaps: 1, duplicates: 1))
        #expect(checker.missing { [5, 4, 1][$0] } == 1)  // stream 1 never got 2
    }

    @Test func lateArrivalsInsideOneBigGapAreReorderingsAndTheRestStaysMissing() {
        var checker = StreamChecker(streams: 1)
        checker.observe(stream: 0, sequence: 0)
        checker.observe(stream: 0, sequence: 1_000_000)  // one gap of 999,999 numbers
        for late in [500_000, 1, 999_999] { checker.observe(stream: 0, sequence: late) }
        checker.observe(stream: 0, sequence: 500_000)  // seen already: a duplicate, not a reordering
        #expect(checker.counts == .init(delivered: 6, gaps: 1, duplicates: 1, reordered: 3))
        #expect(checker.missing { _ in 1_000_001 } == 999_996)
    }

    @Test func aRepeatAfterAFilledGapIsADuplicate() {
        var checker = StreamChecker(streams: 1)
        for sequence in [0, 1, 2, 4, 3, 4] { checker.observe(stream: 0, sequence: sequence) }
        #expect(checker.counts == .init(delivered: 6, gaps: 1, duplicates: 1, reordered: 1))
        #expect(checker.missing { _ in 5 } == 0)
    }
}
