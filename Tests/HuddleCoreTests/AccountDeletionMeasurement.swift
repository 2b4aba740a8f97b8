import Foundation
@testable import HuddleCore
import HuddleProtocol
import Testing

/// How long the core is busy deleting a heavy user (10k messages, 100 photos) among many
/// others: the deletion's turn and the longest chunk of its channels (`HuddleCore+ErasureChunks`),
/// what every other request may wait behind. Opt-in (`HUDDLE_MEASURE=1`), printed,
/// never asserted (docs/ARCHITECTURE.md: speed is measured, not tested).
@Suite struct AccountDeletionMeasurement {
    @Test func deletingAHeavyUserTakesBoundedTurns() {
        guard ProcessInfo.processInfo.environment["HUDDLE_MEASURE"] == "1" else { return }
        let core = HuddleCore()
        var time: Int64 = 1_763_712_000_000
        func tick() -> Int64 {
            time += 1
            return time
        }
        let credentials = Credentials(salt: [1], hash: [2], iterations: 1)
        func signUp(_ name: Username, _ index: Int) {
            core.apply(.signUp(
                username: name, email: "\(name)@example.com", credentials: credentials,
                session: NewSession(tokenHash: Array("\(name)".utf8), expiresAt: time + 86_400_000), time: tick()))
        }
        // 10 friends with 500 messages each way in their chat rooms (5,000 by the heavy user),
        // 100 rooms of 1,000 publications each, 50 of them the heavy user's (5,000), 100 photos.
        signUp("heavy", 0)
        let others = (0..<2000).map { "user\($0)" }
        for (index, name) in others.enumerated() { signUp(name, index) }
        for friend in others.prefix(10) {
            core.apply(.acceptFriendRequest(from: "heavy", to: friend, time: tick()))
            let room = HuddleCore.chatChannel("heavy", friend)
            for n in 0..<1000 {
                core.apply(.publish(channel: room, from: n % 2 == 0 ? "heavy" : friend, type: "message", data: "\"m\(n)\"", time: tick()))
            }
        }
        for room in 0..<100 {
            for n in 0..<1000 {
                let from = n % 20 == 0 ? "heavy" : others[(room * 1000 + n) % others.count]
                core.apply(.publish(channel: "room:r\(room)", from: from, type: "message", data: "\"r\(n)\"", time: tick()))
            }
        }
        for photo in 0..<100 {
            let hash = String(repeating: String(format: "%02x", photo), count: 32)
            core.apply(.addPhotoOwner(owner: "heavy", hash: hash, size: 2_000_000, time: tick()))
        }
        for post in 1...100 {
            core.apply(.createPost(id: UInt64(post), author: post % 2 == 0 ? "heavy" : others[post], text: "p", activity: nil, at: nil, time: tick()))
            core.apply(.setLike(post: UInt64(post), user: "heavy", liked: true, time: tick()))
        }

        let clock = ContinuousClock()
        var publish = Duration.zero
        for n in 0..<1000 {
            let started = clock.now
            _ = core.handle(CoreRequest(requestID: "p\(n)", .serverPublish(channel: "room:r0", type: "message", data: "1")), at: tick())
            publish += clock.now - started
        }
        let started = clock.now
        let step = core.handle(CoreRequest(requestID: "d", .deleteUser(username: "heavy")), at: tick())
        let deletion = clock.now - started
        var chunks = 0
        var longestChunk = Duration.zero
        var removed = 0
        while core.hasPendingErasure {
            let started = clock.now
            let chunk = core.handle(.continueErasure, at: tick())
            longestChunk = max(longestChunk, clock.now - started)
            chunks += 1
            removed += chunk.outputs.filter { if case .deliver(let publication, _) = $0 { publication.removed } else { false } }.count
        }
        print("""
            account deletion: 5,000 chat + 5,000 room messages, 100 photos, 100 posts liked, among 2,000 users, \
            110 channels, 110,000 publications: the core is busy \(deletion) in the deletion's turn \
            (\(step.commands.count) commands), then \(chunks) chunks, the longest \(longestChunk) \
            (\(removed) tombstones told, the chat rooms dropped whole); a publish takes \(publish / 1000) on average
            """)
        #expect(core.durableState.accounts["heavy"] == nil)
    }
}
