@testable import HuddleServer
import Testing

/// `DurabilityHold`: outputs leave only once the log is durable up to their sequence, oldest
/// first, per loop in the order they were held.
@Suite struct DurabilityHoldTests {
    static func close(_ serial: UInt64) -> LoopDelivery { .close(serial: serial, code: 1000, reason: "") }

    static func serials(_ deliveries: [LoopDelivery]) -> [UInt64] {
        deliveries.compactMap { if case .close(let serial, _, _) = $0 { serial } else { nil } }
    }

    @Test func releasesOnlyWhatTheDurableSequenceCoversInOrder() {
        var hold = DurabilityHold()
        #expect(hold.release(upTo: 100, loops: 2) == nil)
        hold.hold([[Self.close(1)], []], [], until: 5)
        hold.hold([[Self.close(2)], [Self.close(3)]], [], until: 5)  // same sequence: one batch
        hold.hold([[], [Self.close(4)]], [], until: 7)
        hold.hold([[Self.close(5)], []], [], until: 9)

        #expect(hold.release(upTo: 4, loops: 2) == nil)
        let first = hold.release(upTo: 7, loops: 2)
        #expect(first.map { Self.serials($0.deliveries[0]) } == [1, 2])
        #expect(first.map { Self.serials($0.deliveries[1]) } == [3, 4])
        #expect(first?.sequence == 7)
        #expect(!hold.isEmpty)
        #expect(hold.release(upTo: 8, loops: 2) == nil)
        let last = hold.release(upTo: 9, loops: 2)
        #expect(last.map { Self.serials($0.deliveries[0]) } == [5])
        #expect(hold.isEmpty)
    }
}
