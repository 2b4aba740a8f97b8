import HuddleIO
import Testing

@Suite(.serialized) struct WorkerThreadsTests {
    @Test func jobsRunOffTheCallersLoopAndCanAnswerIt() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let workers = try WorkerThreads(name: "test-worker", count: 2)
        defer { workers.stop() }
        let jobs = 50
        let answers = LoopBound([Int](), loop: loop)
        let ranOnTheLoop = LoopBound(0, loop: loop)
        loop.execute {
            for job in 0..<jobs {
                workers.run {
                    let onLoop = loop.isInLoop
                    loop.execute {
                        if onLoop { ranOnTheLoop.value += 1 }
                        answers.value.append(job)
                        if answers.value.count == jobs { loop.stop() }
                    }
                }
            }
        }
        #expect(runUntilStopped(loop))
        #expect(ranOnTheLoop.value == 0)
        #expect(answers.value.sorted() == Array(0..<jobs))
    }
}
