import HuddleProtocol
import Testing

@testable import HuddleCore

/// A deleted user's channels go in bounded chunks after the deletion (`HuddleCore+ErasureChunks`):
/// reads see them erased at once, each chunk stays under its work bound, and a replay or a
/// snapshot taken between two chunks carries on to the same state.
@Suite struct ErasureChunkTests {
    /// alice, with two friends and messages in their 1:1 rooms and in four rooms others write in.
    static func world(chunkWork: Int) -> (CoreHarness, bob: ConnectionRef) {
        var configuration = CoreConfiguration()
        configuration.erasureChunkWork = chunkWork
        let harness = CoreHarness(configuration: configuration)
        let alice = harness.signUp("alice").connection
        let bob = harness.signUp("bob").connection
        let carol = harness.signUp("carol").connection
        harness.makeFriends("alice", "bob")
        harness.makeFriends("alice", "carol")
        for index in 0..<30 {
            _ = harness.publish(alice, "chat:alice~bob", "\(index)")
            _ = harness.publish(bob, "chat:alice~bob", "\(index)")
            _ = harness.publish(carol, "chat:alice~carol", "\(index)")
        }
        for room in 0..<4 {
            _ = harness.subscribe(bob, "room:r\(room)")
            for index in 0..<10 {
                _ = harness.publish(index % 2 == 0 ? alice : bob, "room:r\(room)", "\(index)")
            }
        }
        return (harness, bob)
    }

    static func history(_ harness: CoreHarness, _ reader: ConnectionRef, _ channel: String) -> (epoch: String, publications: [Publication]) {
        let step = harness.handle(.history(reader, requestID: "h", channel: channel, before: nil, limit: 100))
        guard case .history(_, let epoch, _, let publications, _) = step.replies.first else { return ("?", []) }
        return (epoch, publications)
    }

    @Test func aUserWithMoreThanAChunkIsErasedChunkByChunkAndReadsSeeItAtOnce() throws {
        let (harness, bob) = Self.world(chunkWork: 25)
        _ = harness.handle(.deleteUser(requestID: "d", username: "alice"))
        #expect(harness.core.hasPendingErasure)
        #expect(harness.core.durableState.channels["chat:alice~bob"] != nil, "the deletion's turn leaves her channels to the chunks")
        // Reads see the erasure's result before any chunk ran.
        #expect(Self.history(harness, bob, "chat:alice~bob").epoch == "")
        let room = Self.history(harness, bob, "room:r0").publications
        #expect(room.count == 10 && room.filter(\.removed).count == 5 && !room.contains { $0.from == "alice" })

        var chunks: [[String]] = []
        var told = 0
        var midway: CoreDurableState?
        while harness.core.hasPendingErasure {
            let step = harness.handle(.continueErasure)
            for command in step.commands {
                if case .eraseChannels(_, let names, _) = command { chunks.append(names) }
            }
            told += step.outputs.filter { if case .deliver(let publication, _) = $0 { publication.removed } else { false } }.count
            if midway == nil, chunks.count == 2 { midway = harness.core.durableState }
            #expect(chunks.count < 100, "the erasure ends")
            if chunks.count >= 100 { break }
        }
        // 25 units: one name (20) and at most the first channel's publications; each of her
        // six channels with something of hers is a chunk of its own.
        #expect(chunks.count == 6 && chunks.allSatisfy { $0.count == 1 }, "\(chunks)")
        #expect(told == 20, "each tombstone is told to the room's subscribers")
        let state = harness.core.durableState
        #expect(state.erasures.isEmpty)
        #expect(state.channels["chat:alice~bob"] == nil && state.channels["chat:alice~carol"] == nil)
        for room in 0..<4 {
            let channel = try #require(state.channels["room:r\(room)"])
            #expect(!channel.hasPublications(by: "alice") && channel.retainedCount == 10)
        }

        // A replay of the log, and a snapshot taken between two chunks plus the chunks after it,
        // rebuild the same state.
        #expect(harness.replayed().durableState == state)
        let snapshot = try CoreDurableState(snapshotPayload: try #require(midway).snapshotPayload)
        #expect(snapshot.erasures.contains("alice"))
        let restored = HuddleCore(configuration: harness.core.configuration, restoring: snapshot)
        while restored.hasPendingErasure { _ = restored.handle(.continueErasure, at: harness.time) }
        #expect(restored.durableState == state)
    }

    @Test func aChunkStaysWithinItsWork() {
        let (harness, _) = Self.world(chunkWork: 100)
        _ = harness.handle(.deleteUser(requestID: "d", username: "alice"))
        var chunkSizes: [Int] = []
        while harness.core.hasPendingErasure {
            let before = harness.core.durableState.channels
            let step = harness.handle(.continueErasure)
            for case .eraseChannels(_, let names, _) in step.commands {
                // A chunk may pass its bound by one channel at most (the one that reaches it).
                let work = names.map { (before[$0]?.retainedCount ?? 0) + harness.core.configuration.erasureNameWork }.reduce(0, +)
                chunkSizes.append(work)
            }
        }
        #expect(!chunkSizes.isEmpty && chunkSizes.allSatisfy { $0 <= 100 + 60 + 20 }, "\(chunkSizes)")
    }
}
