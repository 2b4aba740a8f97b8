import HuddleIO
import Testing

/// The loop's cross-thread entry points: `execute` from any thread, `stop`.
@Suite(.serialized) struct EventLoopTests {
    @Test func stopFromAnotherThreadEndsRun() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let stopper = try LoopThread.spawn(name: "test-stopper") { loop.stop() }
        #expect(runUntilStopped(loop))
        stopper.join()
    }

    @Test func tasksFromOtherThreadsRunOnTheLoopInTheOrderEachThreadSentThem() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let senders = 4
        let tasksPerSender = 2_000
        let received = LoopBound([[Int]](repeating: [], count: senders), loop: loop)
        let offLoop = LoopBound(0, loop: loop)
        let remaining = LoopBound(senders * tasksPerSender, loop: loop)
        let threads = try (0..<senders).map { sender in
            try LoopThread.spawn(name: "test-sender-\(sender)") {
                for number in 0..<tasksPerSender {
                    loop.execute {
                        if !loop.isInLoop { offLoop.value += 1 }
                        received.value[sender].append(number)
                        remaining.value -= 1
                        if remaining.value == 0 { loop.stop() }
                    }
                }
            }
        }
        #expect(runUntilStopped(loop))
        for thread in threads { thread.join() }
        #expect(offLoop.value == 0)
        for sender in 0..<senders {
            #expect(received.value[sender] == Array(0..<tasksPerSender))
        }
    }

    /// A task queued by a task runs in a later turn, and the loop keeps going until stopped.
    @Test func aTaskMayQueueMoreAndStopTheLoopLater() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let steps = LoopBound([Int](), loop: loop)
        @Sendable func step(_ number: Int) {
            steps.value.append(number)
            if number == 3 { loop.stop() } else { loop.execute { step(number + 1) } }
        }
        loop.execute { step(1) }
        #expect(runUntilStopped(loop))
        #expect(steps.value == [1, 2, 3])
    }

    @Test func theLoopRunsAgainAfterItStopped() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let runs = LoopBound(0, loop: loop)
        for _ in 0..<2 {
            loop.execute {
                runs.value += 1
                loop.stop()
            }
            #expect(runUntilStopped(loop))
        }
        #expect(runs.value == 2)
    }
}
