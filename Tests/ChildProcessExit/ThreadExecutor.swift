import Foundation

/// A task executor with one thread of its own, for a test whose code blocks (socket reads,
/// child-process waits, sleeps). Swift Testing runs tests on the cooperative pool, one thread
/// per core: a test that blocks there keeps every other test's awaits from resuming, so on a
/// loaded two-core machine a test could sit 75 s between two steps and find the server had
/// closed its idle connection. On a thread of its own a test blocks nobody but itself.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var stopping = false

    public init() {
        // The thread holds the executor until it has seen `stop`.
        Thread { self.run() }.start()
    }

    /// The executor whose thread runs the caller, if any.
    public static var current: ThreadExecutor? {
        Thread.current.threadDictionary[Self.threadKey] as? ThreadExecutor
    }

    private static let threadKey = "ThreadExecutor"

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else {
            // A task that outlives the test and still prefers this executor: run it elsewhere.
            Thread { job.runSynchronously(on: self.asUnownedTaskExecutor()) }.start()
            return
        }
        jobs.append(job)
        condition.signal()
    }

    /// Lets the thread finish the jobs queued so far and end.
    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        Thread.current.threadDictionary[Self.threadKey] = self
        defer { Thread.current.threadDictionary[Self.threadKey] = nil }
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
