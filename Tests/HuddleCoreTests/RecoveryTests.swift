import HuddleCore
import Testing

@Suite struct RecoveryTests {
    /// alice publishes `count` messages to room:lobby, 1 ms apart; bob is signed in.
    private func setUp(count: UInt64, configuration: CoreConfiguration = .init()) -> (CoreHarness, bob: ConnectionRef, epoch: String) {
        let harness = CoreHarness(configuration: configuration)
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        var epoch = ""
        for index in 0..<count {
            epoch = harness.publish(alice, "room:lobby", "\(index + 1)").replies[0].epoch!
            harness.advance(1)
        }
        return (harness, bob, epoch)
    }

    private func offsets(_ reply: CoreReply?) -> [UInt64]? {
        guard case let .subscribed(_, _, _, _, publications)? = reply else { return nil }
        return publications.map(\.offset)
    }

    private func recovered(_ reply: CoreReply?) -> Bool?? {
        guard case let .subscribed(_, _, _, recovered, _)? = reply else { return nil }
        return .some(recovered)
    }

    @Test func returnsExactlyTheMissedPublicationsInOrder() {
        let (harness, bob, epoch) = setUp(count: 5)
        let reply = harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 2))
        guard case let .subscribed(channel, replyEpoch, offset, recovered, publications)? = reply else {
            Issue.record("\(String(describing: reply))")
            return
        }
        #expect(channel == "room:lobby" && replyEpoch == epoch && offset == 5 && recovered == true)
        #expect(publications.map(\.offset) == [3, 4, 5])
        #expect(publications.map(\.data) == ["3", "4", "5"])
        #expect(publications.allSatisfy { $0.epoch == epoch && $0.channel == "room:lobby" && $0.from == "alice" })
        #expect(publications.map(\.time) == [2, 3, 4].map { CoreHarness.startTime + $0 })
    }

    @Test func upToDateIsRecoveredWithNothingMissed() {
        let (harness, bob, epoch) = setUp(count: 5)
        let reply = harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 5))
        #expect(recovered(reply) == true)
        #expect(offsets(reply) == [])
    }

    @Test func anotherEpochIsNotRecovered() {
        let (harness, bob, _) = setUp(count: 5)
        let reply = harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: "elsewhere-1", offset: 2))
        #expect(recovered(reply) == false)
        #expect(offsets(reply) == [])
    }

    @Test func aPositionAheadOfTheChannelIsNotRecovered() {
        let (harness, bob, epoch) = setUp(count: 5)
        #expect(recovered(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 6))) == false)
    }

    @Test func aGapBeyondTheKeptHistoryIsNotRecovered() {
        var configuration = CoreConfiguration()
        configuration.history[.room] = HistoryLimit(maxPublications: 5, maxAgeMilliseconds: CoreHarness.day)
        let (harness, bob, epoch) = setUp(count: 10, configuration: configuration)
        // Kept: 6...10. From 5 on nothing is missing; from 4, publication 5 is gone.
        #expect(offsets(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 5))) == [6, 7, 8, 9, 10])
        #expect(recovered(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 4))) == false)
        #expect(recovered(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 0))) == false)
    }

    @Test func tooManyMissedIsNotRecovered() {
        var configuration = CoreConfiguration()
        configuration.maxRecoveredPublications = 3
        let (harness, bob, epoch) = setUp(count: 10, configuration: configuration)
        #expect(offsets(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 7))) == [8, 9, 10])
        #expect(recovered(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 6))) == false)
    }

    @Test func publicationsPastTheAgeLimitAreNotRecovered() {
        let (harness, bob, epoch) = setUp(count: 3)
        // Publication 1 was at start, 2 at start + 1 ms; a day after publication 1 it is too old.
        harness.time = CoreHarness.startTime + CoreHarness.day
        #expect(recovered(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 0))) == false)
        #expect(offsets(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: epoch, offset: 1))) == [2, 3])
    }

    @Test func withoutSinceRecoveredIsAbsent() {
        let (harness, bob, epoch) = setUp(count: 3)
        #expect(harness.subscribe(bob, "room:lobby") == .subscribed(channel: "room:lobby", epoch: epoch, offset: 3, recovered: nil, publications: []))
    }

    /// The empty-channel rule: a never-published channel is (epoch "", offset 0), and that
    /// position stays recoverable once the channel exists, while publication 1 is kept.
    @Test func theEmptyPositionRecoversFromTheFirstPublication() {
        var configuration = CoreConfiguration()
        configuration.history[.room] = HistoryLimit(maxPublications: 3, maxAgeMilliseconds: CoreHarness.day)
        let harness = CoreHarness(configuration: configuration)
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let empty = ChannelPosition(epoch: "", offset: 0)
        #expect(harness.subscribe(bob, "room:lobby", since: empty) == .subscribed(channel: "room:lobby", epoch: "", offset: 0, recovered: true, publications: []))
        #expect(recovered(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: "", offset: 1))) == false)
        #expect(recovered(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: "x", offset: 0))) == false)
        for _ in 0..<3 { harness.publish(alice, "room:lobby") }
        #expect(offsets(harness.subscribe(bob, "room:lobby", since: empty)) == [1, 2, 3])
        #expect(recovered(harness.subscribe(bob, "room:lobby", since: ChannelPosition(epoch: "", offset: 1))) == false)
        harness.publish(alice, "room:lobby")
        #expect(recovered(harness.subscribe(bob, "room:lobby", since: empty)) == false)
    }
}

@Suite struct HistoryTests {
    private func historyPage(_ harness: CoreHarness, _ connection: ConnectionRef?, before: UInt64?, limit: Int) -> (offsets: [UInt64], next: UInt64?)? {
        let step = harness.handle(.history(connection, requestID: "h", channel: "room:lobby", before: before, limit: limit))
        guard case let .history(_, _, _, publications, nextBefore)? = step.replies.first else { return nil }
        return (publications.map(\.offset), nextBefore)
    }

    private func harnessWithPublications(_ count: Int, configuration: CoreConfiguration = .init()) -> (CoreHarness, ConnectionRef) {
        let harness = CoreHarness(configuration: configuration)
        let (alice, _) = harness.signUp("alice")
        for _ in 0..<count {
            harness.publish(alice, "room:lobby")
            harness.advance(1)
        }
        return (harness, alice)
    }

    @Test func pagesNewestFirstToTheEnd() {
        let (harness, alice) = harnessWithPublications(7)
        let step = harness.handle(.history(alice, requestID: "h", channel: "room:lobby", before: nil, limit: 3))
        guard case let .history(channel, epoch, offset, publications, nextBefore)? = step.replies.first else {
            Issue.record("\(step)")
            return
        }
        #expect(channel == "room:lobby" && epoch == ChannelEpochs.expected(time: CoreHarness.startTime, sequence: 1) && offset == 7)
        #expect(publications.map(\.offset) == [7, 6, 5] && nextBefore == 5)
        #expect(historyPage(harness, alice, before: 5, limit: 3)! == ([4, 3, 2], 2))
        #expect(historyPage(harness, alice, before: 2, limit: 3)! == ([1], nil))
        #expect(historyPage(harness, alice, before: 1, limit: 3)! == ([], nil))
        #expect(historyPage(harness, alice, before: 4, limit: 3)! == ([3, 2, 1], nil))
        #expect(historyPage(harness, alice, before: 100, limit: 100)! == ([7, 6, 5, 4, 3, 2, 1], nil))
        #expect(historyPage(harness, nil, before: nil, limit: 2)! == ([7, 6], 6))
        // The core treats a limit below 1 as 1; the server clamps before.
        #expect(historyPage(harness, alice, before: nil, limit: 0)! == ([7], 7))
    }

    @Test func anEmptyChannelHasEpochEmptyAndNothing() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let step = harness.handle(.history(alice, requestID: "h", channel: "room:lobby", before: nil, limit: 50))
        #expect(step.replies == [.history(channel: "room:lobby", epoch: "", offset: 0, publications: [], nextBefore: nil)])
    }

    @Test func historyIsTrimmedByCountOnPublish() {
        var configuration = CoreConfiguration()
        configuration.history[.room] = HistoryLimit(maxPublications: 5, maxAgeMilliseconds: CoreHarness.day)
        let (harness, alice) = harnessWithPublications(12, configuration: configuration)
        #expect(harness.core.durableState.channels["room:lobby"]?.retainedCount == 5)
        #expect(harness.core.durableState.channels["room:lobby"]?.firstRetainedOffset == 8)
        #expect(historyPage(harness, alice, before: nil, limit: 3)! == ([12, 11, 10], 10))
        #expect(historyPage(harness, alice, before: 10, limit: 3)! == ([9, 8], nil))
        #expect(historyPage(harness, alice, before: 8, limit: 3)! == ([], nil))
    }

    @Test func readsHideWhatAgedOutWithoutChangingState() {
        let (harness, alice) = harnessWithPublications(4)
        let before = harness.core.durableState
        // Publications at start + 0...3 ms; a day after start + 1 ms, the first two are too old.
        harness.time = CoreHarness.startTime + CoreHarness.day + 1
        #expect(historyPage(harness, alice, before: nil, limit: 10)! == ([4, 3], nil))
        #expect(historyPage(harness, alice, before: nil, limit: 1)! == ([4], 4))
        #expect(harness.core.durableState == before)
        // The next publish trims them for good.
        harness.publish(alice, "room:lobby")
        #expect(harness.core.durableState.channels["room:lobby"]?.firstRetainedOffset == 3)
    }

    @Test func namespacesKeepTheirOwnLimits() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        for _ in 0..<101 { harness.handle(.serverPublish(requestID: "p", channel: "loc:alice", type: "place", data: "{}")) }
        for _ in 0..<101 { harness.publish(alice, "room:lobby") }
        #expect(harness.core.durableState.channels["loc:alice"]?.retainedCount == 100)
        #expect(harness.core.durableState.channels["room:lobby"]?.retainedCount == 101)
    }
}
