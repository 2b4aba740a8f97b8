@testable import HuddleCore
import Foundation
import Testing

@Suite struct PublicationRingTests {
    private func publication(_ index: Int) -> RetainedPublication {
        RetainedPublication(type: "message", from: "alice", data: "\(index)", time: Int64(index))
    }

    private func contents(_ ring: PublicationRing) -> [String] {
        (0..<ring.count).map { ring[$0].data }
    }

    @Test func keepsTheNewestUpToTheLimitAcrossManyWraps() {
        var ring = PublicationRing()
        for index in 0..<1_000 {
            ring.append(publication(index), keepingAtMost: 10)
            let kept = max(0, index - 9)...index
            #expect(contents(ring) == kept.map { "\($0)" })
        }
        #expect(ring.capacity == 10)
    }

    @Test func growsByDoublingButNeverPastTheLimit() {
        var ring = PublicationRing()
        var capacities: [Int] = []
        for index in 0..<100 {
            ring.append(publication(index), keepingAtMost: 50)
            if capacities.last != ring.capacity { capacities.append(ring.capacity) }
        }
        #expect(capacities == [8, 16, 32, 50])
    }

    @Test func shrinksWhenMostlyEmptyAndReleasesEverythingWhenEmpty() {
        var ring = PublicationRing()
        for index in 0..<64 { ring.append(publication(index), keepingAtMost: 64) }
        for _ in 0..<60 { ring.removeFirst() }
        #expect(ring.capacity < 64)
        #expect(contents(ring) == ["60", "61", "62", "63"])
        for _ in 0..<4 { ring.removeFirst() }
        #expect(ring.isEmpty && ring.capacity == 0)
    }

    @Test func aSmallerLimitDropsTheOldestFirst() {
        var ring = PublicationRing()
        for index in 0..<10 { ring.append(publication(index), keepingAtMost: 10) }
        ring.append(publication(10), keepingAtMost: 3)
        #expect(contents(ring) == ["8", "9", "10"])
    }

    @Test func equalityAndCodingIgnoreTheLayout() throws {
        var wrapped = PublicationRing()
        for index in 0..<13 { wrapped.append(publication(index), keepingAtMost: 5) }
        let straight = PublicationRing((8..<13).map(publication))
        #expect(wrapped == straight)
        var different = straight
        different.removeFirst()
        #expect(wrapped != different)
        let encoded = RecordCoding.json(wrapped)
        #expect(RecordCoding.json(straight) == encoded)
        #expect(try RecordCoding.value(PublicationRing.self, encoded) == wrapped)
    }
}

@Suite struct MinHeapTests {
    @Test func popsInOrderWhateverThePushOrder() {
        var heap = MinHeap<Int>()
        var generator = SplitMix(seed: 42)
        var pushed: [Int] = []
        for _ in 0..<500 {
            let value = Int(generator.next() % 1000)
            heap.push(value)
            pushed.append(value)
        }
        var popped: [Int] = []
        while let value = heap.popMin() { popped.append(value) }
        #expect(popped == pushed.sorted())
        #expect(heap.isEmpty)
    }
}

/// A tiny deterministic generator, so test data is the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
