/// Runs a set-up step (connect, sign up, subscribe…) for items 0..<count, at most
/// `concurrency` at a time: opening 10,000 connections at once would only measure the
/// listen backlog, and one at a time would take minutes. A step reports back once, with
/// whether it succeeded; when every step has reported, `completion` gets the failure count.
final class SetupQueue {
    let count: Int
    private let concurrency: Int
    private let step: (Int, @escaping (Bool) -> Void) -> Void
    private let completion: (Int) -> Void
    private var started = 0
    private(set) var finished = 0
    private(set) var failed = 0

    init(count: Int, concurrency: Int, step: @escaping (_ index: Int, _ done: @escaping (Bool) -> Void) -> Void, completion: @escaping (_ failed: Int) -> Void) {
        self.count = count
        self.concurrency = max(1, concurrency)
        self.step = step
        self.completion = completion
    }

    var succeeded: Int { finished - failed }

    /// Call once, on the loop thread.
    func run() {
        if count == 0 { return completion(0) }
        startMore()
    }

    private func startMore() {
        while started < count, started - finished < concurrency {
            let index = started
            started += 1
            var reported = false
            step(index) { [self] ok in
                guard !reported else { return }
                reported = true
                finished += 1
                if !ok { failed += 1 }
                if finished == count { completion(failed) } else { startMore() }
            }
        }
    }
}
