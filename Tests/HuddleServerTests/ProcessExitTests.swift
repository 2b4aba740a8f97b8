import ChildProcessExit
import Foundation
import Testing

/// Issue 12, problem 10: the harness must see a child's exit even when a descriptor Foundation
/// watches for it lives on in another process. CI failed with "`--port` did not finish within
/// 20 s" and "server did not exit within 15 s of SIGTERM" after the server had logged `stopped`:
/// a process spawned at the same moment by another test had inherited that descriptor. Here a
/// grandchild inherits it on purpose, deterministically.
@Suite(.ownThread) struct ProcessExitTests {
    @Test func anExitIsSeenWhileAnotherProcessHoldsTheChildsDescriptors() throws {
        let (status, output) = try runChildToCompletion("/bin/sh", ["-c", "sleep 60 & echo $!; exit 3"], timeout: 20)
        let grandchild = try #require(Int32(output.trimmingCharacters(in: .whitespacesAndNewlines)), "output: \(output)")
        defer { kill(grandchild, SIGKILL) }
        #expect(status == 3)
    }
}
