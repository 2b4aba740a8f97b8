import HuddleIO
import Testing

/// `EventLoop.isInLoop` / `assertInLoop` and `LoopBound`: what belongs to a loop is touched only
/// on its thread, and a debug build stops when it is not.
@Suite(.serialized) struct LoopConfinementTests {
    @Test func theRunningThreadIsInTheLoopAndSoIsItsOwnerWhileItDoesNotRun() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        // Not running: whoever sets the loop up (or tears it down) owns it.
        #expect(loop.isInLoop)
        let seen = LoopBound(false, loop: loop)
        loop.execute {
            seen.value = loop.isInLoop
            loop.stop()
        }
        #expect(runUntilStopped(loop))
        #expect(seen.value)
        #expect(loop.isInLoop)
    }

    @Test func anotherThreadIsNotInARunningLoop() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let verdict = LoopBound<Bool?>(nil, loop: loop)
        loop.execute {
            // Spawned by the running loop, so it asks while the loop runs.
            let asker = try? LoopThread.spawn(name: "test-asker") {
                let inLoop = loop.isInLoop
                loop.execute {
                    verdict.value = inLoop
                    loop.stop()
                }
            }
            if asker == nil { loop.stop() }
        }
        #expect(runUntilStopped(loop))
        #expect(verdict.value == false)
    }

    @Test func loopBoundCarriesItsValueToTheLoopAndBack() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let counter = LoopBound([Int](), loop: loop)
        let senders = try (0..<3).map { sender in
            try LoopThread.spawn(name: "test-bound-\(sender)") {
                counter.execute { _ in
                    counter.value.append(sender)
                    if counter.value.count == 3 { loop.stop() }
                }
            }
        }
        #expect(runUntilStopped(loop))
        for sender in senders { sender.join() }
        #expect(counter.value.sorted() == [0, 1, 2])
        #expect(counter.loop === loop)
    }

    /// Runs a loop on this thread while another thread does `intrusion` to it, then stops it.
    /// In an exit test: the process is expected to stop before `intrusion` returns.
    private static func runWhileAnotherThreadIntrudes(_ intrusion: @escaping @Sendable (EventLoop) -> Void) throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        loop.execute {
            _ = try? LoopThread.spawn(name: "test-intruder") {
                intrusion(loop)
                loop.stop()
            }
        }
        loop.run()
    }

    @Test(.enabled(if: EventLoop.checksConfinement, "release builds compile the check out"))
    func assertInLoopStopsADebugBuildOffTheLoop() async {
        await #expect(processExitsWith: .failure) {
            try Self.runWhileAnotherThreadIntrudes { $0.assertInLoop() }
        }
    }

    @Test(.enabled(if: EventLoop.checksConfinement, "release builds compile the check out"))
    func loopBoundValueStopsADebugBuildOffTheLoop() async {
        await #expect(processExitsWith: .failure) {
            try Self.runWhileAnotherThreadIntrudes { loop in
                let bound = LoopBound(1, loop: loop)
                bound.value += 1
            }
        }
    }

    /// The same off-loop access, through a registration method of the loop itself.
    @Test(.enabled(if: EventLoop.checksConfinement, "release builds compile the check out"))
    func schedulingFromAnotherThreadStopsADebugBuild() async {
        await #expect(processExitsWith: .failure) {
            try Self.runWhileAnotherThreadIntrudes { $0.schedule(after: 0) {} }
        }
    }
}
