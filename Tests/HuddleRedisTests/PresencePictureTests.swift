import ChildProcessExit
@testable import HuddleRedis
import Testing

/// The ordering of presence messages against full reads, without Redis: what the registry
/// tests cannot make happen on purpose.
@Suite(.ownThread) struct PresencePictureTests {
    private func message(_ node: String, _ sequence: UInt64, _ operation: PresenceMessage.Operation) -> PresenceMessage {
        PresenceMessage(node: node, sequence: sequence, operation: operation)
    }

    @Test func messagesHeldDuringARebuildApplyOnlyAboveItsSequence() {
        var picture = PresencePicture(ownNode: "a")
        picture.beginRebuild()
        // Sent before the read was taken (already in it), and after it.
        #expect(picture.receive(message("b", 4, .online("bob"))) == ([], false))
        #expect(picture.receive(message("b", 5, .offline("bea"))) == ([], false))
        #expect(picture.receive(message("b", 6, .online("bill"))) == ([], false))
        let (changes, again) = picture.rebuilt(["b": (5, ["bob"]), "a": (9, ["ann"])])
        #expect(changes == [.online(user: "bill", node: "b"), .online(user: "bob", node: "b")])
        #expect(!again)
        #expect(picture.elsewhere == ["b": ["bob", "bill"]], "its own node is not part of the picture")
    }

    @Test func aMissedMessageOrAnUnknownNodeAsksForARebuild() {
        var picture = PresencePicture(ownNode: "a")
        #expect(picture.receive(message("b", 3, .online("bob"))).needsRebuild, "a node never read")
        #expect(!picture.receive(message("b", 4, .online("bea"))).needsRebuild)
        #expect(picture.receive(message("b", 6, .offline("bob"))).needsRebuild, "5 was missed")
        #expect(picture.receive(message("b", 5, .offline("bea"))) == ([], false), "older than what was applied")
        #expect(picture.receive(message("b", 7, .registered)).needsRebuild)
    }

    @Test func aGoneNodeIsReportedOnceAndItsLateMessagesIgnored() {
        var picture = PresencePicture(ownNode: "a")
        _ = picture.rebuilt(["b": (2, ["bob"])])
        #expect(picture.receive(message("b", 4, .gone)).changes == [.nodeGone("b")])
        #expect(picture.receive(message("b", 3, .online("bea"))) == ([], false))
        #expect(picture.elsewhere == [:])
        // Absent from a read: gone too, once.
        _ = picture.rebuilt(["c": (1, ["cy"])])
        #expect(picture.rebuilt([:]).changes == [.nodeGone("c")])
        #expect(picture.rebuilt([:]).changes == [])
    }
}
