import Foundation
import Testing

/// Runs each test of a suite on a `ThreadExecutor` of its own, a bounded number at a time.
///
/// The bound replaces the one the cooperative pool used to give by accident: without it every
/// test of the process would start its servers at once. Tests waiting for a slot hold nothing
/// (no server, no connection), so the wait is harmless; a running test owns its thread, so its
/// connections are served as fast as the machine allows, never behind another test's blocking
/// read.
public struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await TestSlots.shared.withSlot {
            let executor = ThreadExecutor()
            defer { executor.stop() }
            try await withTaskExecutorPreference(executor) { try await function() }
        }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test on a thread of its own (see `OwnThreadTrait`).
    public static var ownThread: Self { OwnThreadTrait() }
}

/// At most `count` tests with `OwnThreadTrait` run at once; the others wait, first come first
/// served, without holding a thread.
actor TestSlots {
    /// Four per core: most of a server test's time is spent waiting for the server, not computing.
    static let shared = TestSlots(count: 4 * max(1, ProcessInfo.processInfo.activeProcessorCount))

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { free = count }

    func withSlot(_ body: @Sendable () async throws -> Void) async throws {
        await acquire()
        defer { release() }
        try await body()
    }

    private func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
