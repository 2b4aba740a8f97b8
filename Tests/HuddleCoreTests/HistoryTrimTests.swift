@testable import HuddleCore
import Testing

/// Expired history leaves memory on a tick, not only when its channel is next published to
/// (issue 12, problem 8: rooms published to once kept their data for ever).
@Suite struct HistoryTrimTests {
    @Test func aTickTrimsWhatAgedOutOfAChannelNobodyPublishesTo() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        harness.publish(alice, "room:once")
        harness.advance(CoreHarness.day - 1)
        #expect(harness.handle(.tick).commands.isEmpty, "still readable")
        harness.advance(1)
        let tick = harness.handle(.tick)
        #expect(tick.commands == [.trimExpiredHistory(channels: ["room:once"], time: harness.time)])
        #expect(harness.core.durableState.channels["room:once"]?.retainedCount == 0)
        #expect(harness.core.durableState.channels["room:once"]?.lastOffset == 1, "offsets go on from where they were")
        #expect(harness.handle(.tick).commands.isEmpty, "nothing left to trim")
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func aChannelTrimmedByCountIsTrimmedWhenItsNewOldestExpires() {
        var configuration = CoreConfiguration()
        configuration.history[.room] = HistoryLimit(maxPublications: 2, maxAgeMilliseconds: 1_000)
        let harness = CoreHarness(configuration: configuration)
        let (alice, _) = harness.signUp("alice")
        for _ in 0..<3 {
            harness.publish(alice, "room:busy")
            harness.advance(400)
        }
        // The first publication (scheduled at 1000) was dropped by count: nothing is due then.
        #expect(harness.handle(.tick).commands.isEmpty)
        harness.advance(400)
        let tick = harness.handle(.tick)
        #expect(tick.commands == [.trimExpiredHistory(channels: ["room:busy"], time: harness.time)])
        #expect(harness.core.durableState.channels["room:busy"]?.retainedCount == 1)
        harness.advance(400)
        #expect(harness.handle(.tick).commands == [.trimExpiredHistory(channels: ["room:busy"], time: harness.time)])
        #expect(harness.core.durableState.channels["room:busy"]?.retainedCount == 0)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }
}
