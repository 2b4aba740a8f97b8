import HuddleProtocol
import Testing

@testable import HuddleCore

/// The export archive's core step (protocol.md, "Export"): the token's user gets the JSON part,
/// exactly what `account_export` builds, at most once per `exportIntervalMilliseconds`.
@Suite struct ExportArchiveCoreTests {
    private let caller = ConnectionRef(loop: 1, serial: 5)

    private func access(_ step: CoreStep) -> PhotoAccess? {
        guard step.outputs.count == 1, case .photoAccess(_, let access) = step.outputs[0] else { return nil }
        return access
    }

    @Test func theDocumentIsAccountExportsAndTheIntervalIsPerUser() {
        var configuration = CoreConfiguration()
        configuration.exportIntervalMilliseconds = 10_000
        let harness = CoreHarness(configuration: configuration)
        let (connection, alice) = harness.signUp("alice")
        let (_, bob) = harness.signUp("bob")
        let viaOp = harness.handle(CoreRequest(connection: connection, requestID: "e", .operation(.accountExport)))
        guard case .reply(_, _, .export(let document))? = viaOp.outputs.first else {
            Issue.record("no export reply: \(viaOp.outputs)")
            return
        }

        let first = harness.handle(.exportArchive(caller: caller, tokenHash: alice.tokenHash))
        #expect(access(first) == .exportAllowed(user: "alice", document: document))
        #expect(first.commands.isEmpty, "nothing is written")
        harness.advance(4_000)
        guard case .refused(let error)? = access(harness.handle(.exportArchive(caller: caller, tokenHash: alice.tokenHash))) else {
            Issue.record("a second export within the interval was not refused")
            return
        }
        #expect(error.code == .exportsLimited && error.retryAfterMilliseconds == 6_000)
        // Another user's interval is their own.
        #expect(access(harness.handle(.exportArchive(caller: caller, tokenHash: bob.tokenHash)))?.isExportAllowed == true)
        harness.advance(6_000)
        #expect(access(harness.handle(.exportArchive(caller: caller, tokenHash: alice.tokenHash)))?.isExportAllowed == true)
    }

    @Test func anUnknownTokenIsRefusedBeforeTheInterval() {
        let harness = CoreHarness()
        let refused = access(harness.handle(.exportArchive(caller: caller, tokenHash: [1, 2, 3])))
        #expect(refused == .refused(CoreError(.invalidToken, "unknown or revoked token")))
    }
}

extension PhotoAccess {
    var isExportAllowed: Bool {
        if case .exportAllowed = self { return true }
        return false
    }
}
