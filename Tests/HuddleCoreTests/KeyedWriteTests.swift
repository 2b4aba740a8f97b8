import HuddleCore
import Testing

/// Keyed writes (protocol.md, "Retries"): the first result kept per user, op and `client_id`,
/// within a count and a time window.
@Suite struct KeyedWriteTests {
    static func keyedPost(_ connection: ConnectionRef, _ clientID: String, text: String = "hi", op: String = "post") -> CoreRequest {
        .keyed(connection, requestID: "k", op: op, clientID: clientID, .createPost(connection, requestID: "k", text: text, activity: nil, at: nil))
    }

    static func configuration(perUser: Int = 3, window: Int64 = 60_000) -> CoreConfiguration {
        var configuration = CoreConfiguration()
        configuration.keptResultsPerUser = perUser
        configuration.keptResultMilliseconds = window
        return configuration
    }

    @Test func aRetryGetsTheFirstResultMarkedDuplicateAndChangesNothing() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let first = harness.handle(Self.keyedPost(alice, "p-1"))
        harness.advance(1_000)
        let retry = harness.handle(Self.keyedPost(alice, "p-1", text: "typed again"))
        #expect(retry.commands.isEmpty)
        #expect(retry.outputs == [.reply(alice, requestID: "k", .duplicate(first.replies[0]))])
        #expect(harness.core.durableState.feed.postIDs(of: "alice") == [1])
    }

    @Test func keysAreScopedByUserAndOp() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        _ = harness.handle(Self.keyedPost(alice, "same"))
        let bobs = harness.handle(Self.keyedPost(bob, "same"))
        #expect(bobs.replies.first.map { if case .feedPost = $0 { true } else { false } } == true)
        let otherOp = harness.handle(.keyed(alice, requestID: "c", op: "comment", clientID: "same", .commentOnPost(alice, requestID: "c", post: 1, text: "x")))
        #expect(otherOp.replies.first.map { if case .postComment = $0 { true } else { false } } == true)
    }

    @Test func aRefusalIsNotKeptSoARetryRunsAgain() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let comment = CoreRequest.keyed(alice, requestID: "c", op: "comment", clientID: "c-1", .commentOnPost(alice, requestID: "c", post: 1, text: "x"))
        #expect(harness.handle(comment).errorCode == .postNotFound)
        _ = harness.handle(Self.keyedPost(alice, "p-1"))
        let retry = harness.handle(comment)
        #expect(retry.replies.first.map { if case .postComment = $0 { true } else { false } } == true)
    }

    @Test func theOldestKeyIsForgottenBeyondTheCountPerUser() {
        let harness = CoreHarness(configuration: Self.configuration(perUser: 3))
        let (alice, _) = harness.signUp("alice")
        for n in 1...4 { _ = harness.handle(Self.keyedPost(alice, "p-\(n)")) }
        #expect(harness.core.durableState.keptResults.count(of: "alice") == 3)
        // p-1 is forgotten: sent again it is a new post; p-2 is still kept.
        #expect(harness.handle(Self.keyedPost(alice, "p-2")).commands.isEmpty)
        #expect(!harness.handle(Self.keyedPost(alice, "p-1")).commands.isEmpty)
        #expect(harness.core.durableState.feed.postIDs(of: "alice").count == 5)
    }

    @Test func aKeyIsForgottenAfterTheWindow() {
        let harness = CoreHarness(configuration: Self.configuration(window: 60_000))
        let (alice, _) = harness.signUp("alice")
        _ = harness.handle(Self.keyedPost(alice, "p-1"))
        harness.advance(60_000)
        #expect(harness.handle(Self.keyedPost(alice, "p-1")).commands.isEmpty, "kept for the whole window")
        harness.advance(1)
        let late = harness.handle(Self.keyedPost(alice, "p-1"))
        #expect(!late.commands.isEmpty, "a new write once the window has passed")
        // Keeping the new result dropped the expired one: one result kept, not two.
        #expect(harness.core.durableState.keptResults.count(of: "alice") == 1)
    }

    /// A memory shown without its points is kept without them: a kept result stays small
    /// however many points the memory has.
    @Test func aMemoryUpdateIsKeptWithoutItsPoints() throws {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        _ = harness.handle(.createMemory(alice, requestID: "m", MemoryFields(title: "Lisbon", date: "2025-06-14")))
        let note = String(repeating: "n", count: 2000)
        for time in 1...3 { _ = harness.handle(.addMemoryPoint(alice, requestID: "p", memory: 1, MemoryPointFields(time: Int64(time), note: note))) }
        let update = CoreRequest.keyed(alice, requestID: "u", op: "memory_update", clientID: "u-1",
                                       .updateMemory(alice, requestID: "u", memory: 1, MemoryFields(title: "Lisboa")))
        _ = harness.handle(update)
        let retry = harness.handle(update)
        guard case .duplicate(.keptMemory(let memory, let pointCount)) = retry.replies.first else {
            Issue.record("\(retry.replies)")
            return
        }
        #expect(memory.title == "Lisboa" && memory.points.isEmpty && pointCount == 3)
        #expect(memory.updatedAt == harness.core.durableState.memories.memories(of: "alice").first?.updatedAt)
    }

    /// A user who stops writing does not hold expired results: `tick` forgets them (logged).
    @Test func tickForgetsExpiredResultsOfIdleUsers() {
        var configuration = Self.configuration(window: 60_000)
        configuration.keptResultSweepMilliseconds = 10_000
        let harness = CoreHarness(configuration: configuration)
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        _ = harness.handle(.tick)  // the first sweep, with nothing kept: nothing logged
        _ = harness.handle(Self.keyedPost(alice, "p-1"))
        harness.advance(30_000)
        _ = harness.handle(Self.keyedPost(bob, "p-1"))
        harness.advance(30_001)
        let sweep = harness.handle(.tick)
        #expect(sweep.commands == [.forgetKeptResults(before: harness.time - 60_000, time: harness.time)])
        #expect(harness.core.durableState.keptResults.count(of: "alice") == 0)
        #expect(harness.core.durableState.keptResults.count(of: "bob") == 1)
        #expect(harness.handle(.tick).commands.isEmpty, "not again before the sweep interval")
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func keptResultsSurviveAReplay() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        _ = harness.handle(Self.keyedPost(alice, "p-1"))
        #expect(harness.replayed().durableState == harness.core.durableState)
    }
}
