import HuddleIO
import Testing

@Suite struct SlottedListTests {
    final class Member {
        let name: Int
        var slot = -1
        init(_ name: Int) { self.name = name }
    }

    private func removed(_ list: inout SlottedList<Member>, _ member: Member) -> Bool { list.remove(member) }

    /// Every element's slot is its index; every other member's is -1.
    private func consistent(_ list: SlottedList<Member>, _ everyone: [Member]) -> Bool {
        list.elements.indices.allSatisfy { list.elements[$0].slot == $0 }
            && everyone.allSatisfy { member in list.elements.contains { $0 === member } || member.slot == -1 }
    }

    @Test func appendIsIdempotentAndRemovalFillsTheHoleWithTheLast() {
        var list = SlottedList<Member>(slot: \.slot)
        let members = (0..<5).map(Member.init)
        for member in members { list.append(member) }
        list.append(members[2])
        #expect(list.count == 5 && consistent(list, members))
        #expect(removed(&list, members[1]))
        #expect(list.elements.map(\.name) == [0, 4, 2, 3])
        #expect(consistent(list, members))
        #expect(removed(&list, members[3]))
        #expect(list.elements.map(\.name) == [0, 4, 2])
        #expect(consistent(list, members))
    }

    @Test func removingANonMemberChangesNothing() {
        var list = SlottedList<Member>(slot: \.slot)
        var other = SlottedList<Member>(slot: \.slot)
        let members = (0..<3).map(Member.init)
        for member in members { list.append(member) }
        let stranger = Member(9)
        #expect(!removed(&list, stranger))
        #expect(removed(&list, members[0]))
        #expect(!removed(&list, members[0]))
        // In another list at the same index: the identity check refuses it.
        other.append(stranger)
        stranger.slot = 0
        #expect(!removed(&list, stranger))
        #expect(list.elements.map(\.name) == [2, 1])
    }

    @Test func emptiedAndRefilled() {
        var list = SlottedList<Member>(slot: \.slot)
        let members = (0..<4).map(Member.init)
        for member in members { list.append(member) }
        for member in members.reversed() { #expect(removed(&list, member)) }
        #expect(list.isEmpty && members.allSatisfy { $0.slot == -1 })
        for member in members { list.append(member) }
        #expect(list.elements.map(\.name) == [0, 1, 2, 3] && consistent(list, members))
    }
}
