import HuddleCore
import Testing

/// protocol.md "Backpressure": while a subscriber of a channel is behind, a publish to that
/// channel is refused `busy` and stores nothing; other channels, and the retry of a publication
/// already stored, are not affected.
@Suite struct ReaderBehindTests {
    /// Alice and Bob signed in; Bob subscribed to room:lobby and behind.
    static func bobBehindOnTheLobby() -> (CoreHarness, alice: ConnectionRef, bob: ConnectionRef) {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        _ = harness.subscribe(bob, "room:lobby")
        harness.core.readerBehindChanged(bob, behind: true)
        return (harness, alice, bob)
    }

    @Test func aPublishToAChannelWithAReaderBehindIsBusyAndStoresNothing() {
        let (harness, alice, bob) = Self.bobBehindOnTheLobby()
        let refused = harness.publish(alice, "room:lobby")
        #expect(refused.commands.isEmpty && refused.outputs.count == 1)
        #expect(refused.outputs.first == .reply(alice, requestID: "pub", .failure(CoreError(
            .busy, "a reader of room:lobby is behind; nothing was stored, publish again after retry_after_ms", retryAfterMilliseconds: 100))))
        #expect(harness.publish(alice, "room:other").replies.first?.publishedOffset == 1, "another channel goes on")
        harness.core.readerBehindChanged(bob, behind: false)
        #expect(harness.publish(alice, "room:lobby").replies.first?.publishedOffset == 1)
    }

    @Test func aReaderThatClosesNoLongerHoldsItsChannels() {
        let (harness, alice, bob) = Self.bobBehindOnTheLobby()
        _ = harness.handle(.connectionClosed(bob))
        #expect(harness.publish(alice, "room:lobby").replies.first?.publishedOffset == 1)
    }
}
