@testable import HuddleServer
import Testing

/// The endpoint's reply order (protocol.md: replies come in the order of the requests): a reply
/// made on the loop waits for the core's replies to the requests forwarded before it.
@Suite struct ReplyOrderTests {
    static func text(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test func aLocalReplyWithNothingForwardedGoesAtOnce() {
        var order = ReplyOrder()
        let result1 = order.local(Self.text("pong")) == Self.text("pong")
        #expect(result1)
        #expect(order.unanswered == 0)
    }

    @Test func aLocalReplyWaitsForTheCoreRepliesBeforeIt() {
        var order = ReplyOrder()
        let result2 = order.forward("1")
        #expect(result2 == 1)
        let result3 = order.forward("2")
        #expect(result3 == 2)
        let result4 = order.local(Self.text("pong-3"))
        #expect(result4 == nil)
        let result5 = order.forward("4")
        #expect(result5 == 3)
        let result6 = order.local(Self.text("refused-5"))
        #expect(result6 == nil)
        #expect(order.unanswered == 3)
        // The core answers 1: pong-3 still waits for 2.
        #expect(order.coreAnswered("1").isEmpty)
        // 2 answered: pong-3 may go; refused-5 waits for 4.
        let result7 = order.coreAnswered("2")
        #expect(result7 == [Self.text("pong-3")])
        let result8 = order.coreAnswered("4")
        #expect(result8 == [Self.text("refused-5")])
        #expect(order.unanswered == 0)
        let result9 = order.local(Self.text("pong-6")) == Self.text("pong-6")
        #expect(result9)
    }

    @Test func reusedIDsAreCountedNotConfused() {
        var order = ReplyOrder()
        _ = order.forward("same")
        _ = order.forward("same")
        let result10 = order.local(Self.text("after"))
        #expect(result10 == nil)
        #expect(order.coreAnswered("same").isEmpty)
        let result11 = order.coreAnswered("same")
        #expect(result11 == [Self.text("after")])
    }
}
