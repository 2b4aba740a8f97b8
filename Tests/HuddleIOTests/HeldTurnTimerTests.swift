import Glibc
import HuddleIO
import Testing

/// A turn held up (a long task or handler, a process starved or suspended) past a timer's due
/// time, while a peer's answer is already in a socket: timers judge deadlines ("no reply within
/// N s", "heartbeat missed"), so the loop reads what arrived before it runs them; an answer
/// unread in the socket is not a silence. Each test holds the loop in a task, deterministically:
/// the data is written before the hold ends.
@Suite(.serialized) struct HeldTurnTimerTests {
    private static let due: Int64 = 50

    @Test func aTimerDueAfterAHeldTurnRunsOnceWhatArrivedMeanwhileIsRead() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let pair = try UnixSocketPair(sendBuffer: 4096)
        defer { pair.close() }
        let seen = LoopBound([String](), loop: loop)
        let reader = NotingReader(fd: pair.transportEnd) { seen.value.append("read \($0)") }
        try loop.register(pair.transportEnd, events: EventLoop.readable, handler: reader)
        loop.schedule(after: Self.due) {
            seen.value.append("deadline")
            loop.stop()
        }
        let dueAt = MonotonicClock.milliseconds() + Self.due
        loop.execute {
            pair.peerSends("reply")
            holdPast(dueAt)
        }
        #expect(runUntilStopped(loop))
        #expect(seen.value == ["read reply", "deadline"])
    }

    /// The Redis connect timer's case: the read that ends the wait cancels the timer, which
    /// then does not run although it was due when the hold ended.
    @Test func aTimerCancelledByWhatArrivedDuringTheHoldDoesNotRun() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let pair = try UnixSocketPair(sendBuffer: 4096)
        defer { pair.close() }
        let seen = LoopBound([String](), loop: loop)
        let timeout = LoopBound(0, loop: loop)
        let reader = NotingReader(fd: pair.transportEnd) {
            seen.value.append("read \($0)")
            loop.cancelTimer(timeout.value)
        }
        try loop.register(pair.transportEnd, events: EventLoop.readable, handler: reader)
        timeout.value = loop.schedule(after: Self.due) { seen.value.append("timed out") }
        loop.schedule(after: 2 * Self.due) { loop.stop() }
        let stopDueAt = MonotonicClock.milliseconds() + 2 * Self.due
        loop.execute {
            pair.peerSends("connected")
            holdPast(stopDueAt)
        }
        #expect(runUntilStopped(loop))
        #expect(seen.value == ["read connected"])
    }

    /// Reading early must not swallow the loop's wake-up: a task another thread queued during
    /// the hold runs in a later turn, not whenever something else wakes the loop.
    @Test func aTaskQueuedDuringAHeldTurnStillRuns() throws {
        let loop = try EventLoop(index: 0, readBufferSize: 16)
        let seen = LoopBound([String](), loop: loop)
        loop.schedule(after: Self.due) { seen.value.append("deadline") }
        let dueAt = MonotonicClock.milliseconds() + Self.due
        loop.execute {
            let queuer = try? LoopThread.spawn(name: "test-queuer") {
                loop.execute {
                    seen.value.append("task")
                    loop.stop()
                }
            }
            queuer?.join()
            holdPast(dueAt)
        }
        #expect(runUntilStopped(loop))
        #expect(seen.value == ["deadline", "task"])
    }
}

/// Keeps the loop's thread busy until `deadline` (monotonic ms) has passed, and at least a
/// few milliseconds: a turn held up, however late the loop started.
private func holdPast(_ deadline: Int64) {
    let until = max(deadline, MonotonicClock.milliseconds() + 2)
    while MonotonicClock.milliseconds() <= until { usleep(1_000) }
}

/// Reads what its socket holds and reports it as text.
private final class NotingReader: EventHandler {
    private let fd: Int32
    private let onRead: (String) -> Void

    init(fd: Int32, onRead: @escaping (String) -> Void) {
        self.fd = fd
        self.onRead = onRead
    }

    override func handleEvents(_ events: UInt32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(fd, &buffer, buffer.count)
        if count > 0 { onRead(String(decoding: buffer.prefix(count), as: UTF8.self)) }
    }
}

private extension UnixSocketPair {
    func peerSends(_ text: String) {
        let bytes = Array(text.utf8)
        precondition(send(peerEnd, bytes, bytes.count, 0) == bytes.count)
    }

    func close() {
        _ = Glibc.close(transportEnd)
        _ = Glibc.close(peerEnd)
    }
}
