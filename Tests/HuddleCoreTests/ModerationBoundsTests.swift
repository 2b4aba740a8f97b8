@testable import HuddleCore
import HuddleProtocol
import Testing

/// The bounds of blocking and reports (protocol.md, "Limits"), reached in the core where the
/// real server would need a thousand accounts: the block limit, the report budget over time and
/// the open reports per reporter.
@Suite struct ModerationBoundsTests {
    private func failure(_ step: CoreStep) -> CoreError? {
        guard case .failure(let error)? = step.replies.first else { return nil }
        return error
    }

    @Test func aUserBlocksAtMostTheBoundAndUnblockingMakesRoom() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let names = (0...Blocks.maxBlocksPerUser).map { "user\($0)" }
        for name in names { _ = harness.signUp(name) }
        for name in names.dropLast() {
            #expect(harness.handle(.block(alice, requestID: "b", user: name)).replies == [.done])
        }
        let over = harness.handle(.block(alice, requestID: "b", user: names.last!))
        #expect(failure(over)?.code == .tooManyBlocks && over.commands.isEmpty)
        #expect(harness.handle(.unblock(alice, requestID: "u", user: names[0])).replies == [.done])
        #expect(harness.handle(.block(alice, requestID: "b", user: names.last!)).replies == [.done])
        #expect(harness.core.durableState.blocks.count(of: "alice") == Blocks.maxBlocksPerUser)
        #expect(harness.replayed().durableState == harness.core.durableState)
    }

    @Test func reportsSpendABudgetThatRefillsAndOpenOnesAreBoundedPerReporter() {
        let harness = CoreHarness()
        let (alice, _) = harness.signUp("alice")
        let (bob, _) = harness.signUp("bob")
        var offsets: [UInt64] = []
        for _ in 0..<(Reports.maxOpenPerReporter + 1) {
            if case .published(_, let offset, _)? = harness.publish(bob, "room:lobby").replies.first { offsets.append(offset) }
        }
        func report(_ offset: UInt64) -> CoreStep {
            harness.handle(.report(alice, requestID: "r", target: .message(channel: "room:lobby", offset: offset), reason: "spam", text: ""))
        }
        var filed = 0
        for offset in offsets.prefix(Reports.maxOpenPerReporter) {
            if case .reportFiled? = report(offset).replies.first {
                filed += 1
                continue
            }
            // Out of budget: the refusal says when one more passes, and then it does.
            let refused = report(offset)
            #expect(failure(refused)?.code == .reportsLimited)
            let wait = refused.replies.first.flatMap { reply -> Int64? in
                if case .failure(let error) = reply { return error.retryAfterMilliseconds } else { return nil }
            }
            #expect((wait ?? 0) > 0 && (wait ?? 0) <= 3_600_000 / 10)
            harness.advance(wait ?? 0)
            if case .reportFiled? = report(offset).replies.first { filed += 1 }
        }
        #expect(filed == Reports.maxOpenPerReporter)
        harness.advance(3_600_000)
        let over = report(offsets.last!)
        #expect(failure(over)?.code == .tooManyReports && over.commands.isEmpty)
        // Resolving one makes room.
        harness.handle(CoreRequest(requestID: "api", .moderation(.resolveReport(id: 1, action: "dismissed", note: ""))))
        #expect(report(offsets.last!).replies.first == .reportFiled(id: UInt64(Reports.maxOpenPerReporter + 1)))
        #expect(harness.replayed().durableState == harness.core.durableState)
    }
}
