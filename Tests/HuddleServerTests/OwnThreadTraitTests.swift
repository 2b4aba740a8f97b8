import ChildProcessExit
import Foundation
import Testing

/// The trait every server test runs under: its code, before and after each await, runs on the
/// thread of its own that the trait made for it, never on the cooperative pool that a blocking
/// test would starve.
@Suite(.ownThread) struct OwnThreadTraitTests {
    @Test func aTestRunsOnItsOwnThreadAcrossAwaits() async throws {
        let executor = try #require(ThreadExecutor.current, "the test starts on a ThreadExecutor's thread")
        try await Task.sleep(for: .milliseconds(1))
        #expect(ThreadExecutor.current === executor, "and is back on it after an await")
        async let child = ThreadExecutor.current
        #expect(await child === executor, "child tasks prefer the test's thread too")
    }
}
