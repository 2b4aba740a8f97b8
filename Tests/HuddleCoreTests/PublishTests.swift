import HuddleCore
import Testing

@Suite struct PublishTests {
    @Test func offsetsStartAtOneWithoutGapsAndTheEpochIsFixedAtTheFirstPublish() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        var epochs = Set<String>()
        for expected in UInt64(1)...5 {
            let step = harness.publish(alice, "room:lobby", "{\"n\":\(expected)}")
            #expect(step.replies.first?.publishedOffset == expected)
            epochs.insert(step.replies.first?.epoch ?? "")
            harness.advance(10)
        }
        #expect(epochs == [ChannelEpochs.expected(time: CoreHarness.startTime, sequence: 1)])
        #expect(harness.core.durableState.channels["room:lobby"]?.lastOffset == 5)
    }

    @Test func eachNewChannelGetsADistinctEpochFromTimeAndCount() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let first = harness.publish(alice, "room:a").replies[0].epoch
        let second = harness.publish(alice, "room:b").replies[0].epoch
        harness.advance(1)
        let third = harness.publish(alice, "room:c").replies[0].epoch
        #expect(first == ChannelEpochs.expected(time: CoreHarness.startTime, sequence: 1))
        #expect(second == ChannelEpochs.expected(time: CoreHarness.startTime, sequence: 2))
        #expect(third == ChannelEpochs.expected(time: CoreHarness.startTime + 1, sequence: 3))
        #expect(harness.core.durableState.channels.createdCount == 3)
    }

    @Test func replyComesBeforeDeliveryToEverySubscriberSorted() {
        let harness = CoreHarness()
        let (alice, aliceSession) = harness.signUp("alice", loop: 1)
        let (bob, _) = harness.signUp("bob", loop: 0)
        let aliceOtherLoop = harness.connectSignedIn(with: aliceSession, loop: 0)
        let (carol, _) = harness.signUp("carol", loop: 2)
        for connection in [carol, alice, bob, aliceOtherLoop] {
            _ = harness.subscribe(connection, "room:lobby")
        }
        let step = harness.publish(alice, "room:lobby", "{\"text\":\"hi\"}")
        let publication = Publication(
            channel: "room:lobby", epoch: step.replies[0].epoch!, offset: 1, type: "message", from: "alice",
            data: "{\"text\":\"hi\"}", time: harness.time
        )
        #expect(step.commands == [.publish(channel: "room:lobby", from: "alice", type: "message", data: "{\"text\":\"hi\"}", time: harness.time)])
        #expect(step.outputs == [
            .reply(alice, requestID: "pub", .published(epoch: publication.epoch, offset: 1, time: harness.time)),
            .deliver(publication, to: [bob, aliceOtherLoop, alice, carol].sorted()),
        ])
    }

    @Test func noDeliveryWithoutSubscribers() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let step = harness.publish(alice, "room:lobby")
        #expect(step.outputs.count == 1)
    }

    @Test func publishingDoesNotRequireASubscriptionAndChatMembersReceive() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        harness.makeFriends("alice", "bob")
        _ = harness.subscribe(bob, "chat:alice~bob")
        let step = harness.publish(alice, "chat:alice~bob", "\"yo\"", type: "typing")
        guard case let .deliver(publication, recipients)? = step.outputs.last else {
            Issue.record("no delivery: \(step.outputs)")
            return
        }
        #expect(recipients == [bob])
        #expect(publication.type == "typing" && publication.from == "alice" && publication.data == "\"yo\"")
    }

    @Test func unsubscribedAndClosedConnectionsReceiveNothing() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        let (carol, _) = harness.signUp("carol")
        for connection in [alice, bob, carol] { _ = harness.subscribe(connection, "room:lobby") }
        #expect(harness.handle(.unsubscribe(bob, requestID: "u", channel: "room:lobby")).replies == [.unsubscribed])
        harness.handle(.connectionClosed(carol))
        let step = harness.publish(alice, "room:lobby")
        #expect(step.outputs.last == .deliver(
            Publication(channel: "room:lobby", epoch: step.replies[0].epoch!, offset: 1, type: "message", from: "alice", data: "{}", time: harness.time),
            to: [alice]
        ))
    }
}

/// The epoch format the core documents (`ChannelEpoch`), spelled out independently.
enum ChannelEpochs {
    static func expected(time: Int64, sequence: UInt64) -> String {
        String(time, radix: 36) + "-" + String(sequence, radix: 36)
    }
}
