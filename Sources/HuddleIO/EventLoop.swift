import CHuddleShims
import Glibc
import Synchronization

/// Something that owns a file descriptor registered with an event loop. A class to subclass, not
/// a protocol: the loop's table (one entry per descriptor number, in every loop) then holds a
/// plain reference, 8 bytes, where an existential took 16 — per connection and per loop.
open class EventHandler {
    public init() {}

    /// Called on the loop's thread with the epoll event mask (`EventLoop.readable` etc.).
    /// Every subclass overrides it.
    open func handleEvents(_ events: UInt32) {
        preconditionFailure("\(type(of: self)) registered with an event loop without handling its events")
    }
}

/// One epoll event loop, run by one thread (Redis's `ae.c` in spirit).
///
/// Everything registered with a loop is touched only from that loop's thread; the only
/// thread-safe entry points are `execute(_:)` and `stop()`, which queue work and wake the loop
/// through an eventfd. A turn is: wait for events → dispatch them → run queued tasks → run
/// due timers → run the end-of-turn hooks (where connections flush: one write per socket per turn).
/// Timers judge deadlines, so when some are due in a turn that has lasted (a long task or
/// handler, a starved or suspended process), the loop first dispatches what its sockets
/// received meanwhile (`dispatchWhatArrivedDuringTheTurn`): a reply or pong that came in time
/// is read before the timer that would call it missing.
/// The loop-thread-only methods check their caller in debug builds (`assertInLoop`).
// Sendable: loop-thread state is checked by assertInLoop; cross-thread entry points go through `inbox`.
public final class EventLoop: @unchecked Sendable {
    public static let readable = UInt32(EPOLLIN.rawValue)
    public static let writable = UInt32(EPOLLOUT.rawValue)
    public static let hangup = UInt32(EPOLLHUP.rawValue) | UInt32(EPOLLRDHUP.rawValue)
    public static let error = UInt32(EPOLLERR.rawValue)
    /// With `readable`, for a descriptor several loops wait on (a shared listening socket): an
    /// event wakes one waiting loop, not all of them (only on `register`: it cannot be modified).
    public static let exclusive = UInt32(EPOLLEXCLUSIVE.rawValue)

    /// Which loop this is, 0-based, for logs and for spreading work.
    public let index: Int
    /// The monotonic time in milliseconds when the loop last looked at its sockets (the current
    /// turn's start, or the look before its due timers): cheap "now" for timeouts.
    public var now: Int64 { turnStart }
    /// Behind `now`, which every read and write of every connection reads: a stored property read
    /// from another module pays a run-time exclusivity check (~85 instructions), this getter none.
    /// Only the loop's thread touches it, and only the loop itself writes it, between events.
    @exclusivity(unchecked) private var turnStart: Int64
    /// Scratch space for reads, shared by every connection on this loop: a connection reads
    /// into it, parses in place, and keeps only an incomplete tail. Idle connections hold no buffer.
    public let readBuffer: UnsafeMutableRawBufferPointer

    private let epollFD: Int32
    private let wakeFD: Int32
    /// What one epoll_wait reports, for the turn's wait and the look before its timers.
    private let events: UnsafeMutablePointer<epoll_event>
    private static let maxEvents = 256
    private var handlers: [EventHandler?] = []
    private var timers: [Timer] = []
    private var nextTimerID = 0
    private var turnEndHooks: [() -> Void] = []
    /// The tasks being run, swapped with the inbox's list each turn: both arrays keep their
    /// buffers, so a turn with tasks allocates nothing.
    private var runningTasks: [@Sendable () -> Void] = []
    private var running = false
    /// The thread inside `run()` (a `pthread_t`), 0 while no thread runs the loop.
    private let runningThread = Atomic<UInt>(0)

    private struct Timer {
        var id: Int
        var due: Int64
        var interval: Int64?
        var body: () -> Void
    }

    private struct Inbox: ~Copyable {
        var tasks: [@Sendable () -> Void] = []
        var wakePending = false
        var stopRequested = false
    }
    private let inbox = Mutex(Inbox())

    public init(index: Int, readBufferSize: Int = 256 * 1024) throws {
        self.index = index
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SystemError("epoll_create1") }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            let error = SystemError("eventfd")
            close(epollFD)
            throw error
        }
        readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
        events = .allocate(capacity: Self.maxEvents)
        turnStart = MonotonicClock.milliseconds()
        var event = epoll_event(events: Self.readable, data: epoll_data_t(fd: wakeFD))
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0 else {
            throw SystemError("epoll_ctl(eventfd)")
        }
    }

    deinit {
        close(wakeFD)
        close(epollFD)
        readBuffer.deallocate()
        events.deallocate()
    }

    // MARK: Confinement

    /// Whether the caller may touch what this loop owns: it is the thread running the loop, or
    /// no thread runs it (setting up before `run()` and tearing down after it, which thread
    /// start and join order). Cheap: an atomic load and `pthread_self`.
    public var isInLoop: Bool {
        let owner = runningThread.load(ordering: .relaxed)
        return owner == 0 || owner == pthread_self()
    }

    /// Stops a debug build when the caller may not touch what this loop owns (`isInLoop`);
    /// compiled out of release builds. Called by everything that belongs to one loop's thread.
    public func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(isInLoop, "touched off the thread of event loop \(index)", file: file, line: line)
    }

    /// Whether this build checks confinement (`assertInLoop` is compiled in: a debug build).
    public static let checksConfinement: Bool = {
        var checks = false
        assert({ checks = true; return true }())
        return checks
    }()

    // MARK: Registration (loop thread only)

    public func register(_ fd: Int32, events: UInt32, handler: EventHandler) throws {
        assertInLoop()
        var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else { throw SystemError("epoll_ctl(ADD)") }
        let slot = Int(fd)
        if slot >= handlers.count { handlers.append(contentsOf: repeatElement(nil, count: slot + 1 - handlers.count)) }
        handlers[slot] = handler
    }

    public func modify(_ fd: Int32, events: UInt32) {
        assertInLoop()
        var event = epoll_event(events: events, data: epoll_data_t(fd: fd))
        _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    /// Removes the fd from the loop. The caller closes the fd afterwards.
    public func unregister(_ fd: Int32) {
        assertInLoop()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        if Int(fd) < handlers.count { handlers[Int(fd)] = nil }
    }

    // MARK: Timers and hooks (loop thread only)

    /// Runs `body` on this loop after `milliseconds`, and then every `repeating` milliseconds if given.
    /// Loops keep a handful of timers (sweeps, retries), never one per connection: connection
    /// deadlines are checked by a periodic sweep instead, which costs no memory per connection.
    @discardableResult
    public func schedule(after milliseconds: Int64, repeating: Int64? = nil, _ body: @escaping () -> Void) -> Int {
        assertInLoop()
        nextTimerID += 1
        timers.append(Timer(id: nextTimerID, due: MonotonicClock.milliseconds() + milliseconds, interval: repeating, body: body))
        return nextTimerID
    }

    public func cancelTimer(_ id: Int) {
        assertInLoop()
        timers.removeAll { $0.id == id }
    }

    /// Runs `body` at the end of every turn, after all events and tasks of the turn.
    public func onTurnEnd(_ body: @escaping () -> Void) {
        assertInLoop()
        turnEndHooks.append(body)
    }

    // MARK: Cross-thread

    /// Queues `task` to run on this loop's thread; callable from any thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let mustWake = inbox.withLock { inbox in
            inbox.tasks.append(task)
            if inbox.wakePending { return false }
            inbox.wakePending = true
            return true
        }
        if mustWake { wake() }
    }

    /// Makes `run()` return after the current turn; callable from any thread.
    public func stop() {
        inbox.withLock { $0.stopRequested = true }
        wake()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    // MARK: The loop

    public func run() {
        precondition(runningThread.compareExchange(expected: 0, desired: pthread_self(), ordering: .relaxed).exchanged,
                     "event loop \(index) is already running")
        defer { runningThread.store(0, ordering: .relaxed) }
        running = true
        while running {
            let count = waitForEvents(timeout: waitTimeout())
            dispatch(count, drainingWake: true)
            runTasks()
            runDueTimers()
            for hook in turnEndHooks { hook() }
        }
    }

    /// Waits up to `timeout` ms (-1: for ever) for events; the turn's clock starts when it returns.
    private func waitForEvents(timeout: Int32) -> Int {
        let count = epoll_wait(epollFD, events, Int32(Self.maxEvents), timeout)
        turnStart = MonotonicClock.milliseconds()
        if count < 0 && errno != EINTR {
            // Not recoverable (EBADF/EINVAL mean the loop itself is broken).
            fatalError("\(SystemError("epoll_wait"))")
        }
        return max(Int(count), 0)
    }

    /// Hands the first `count` reported events to their handlers. The wake-up eventfd is drained
    /// only by the turn's wait, which `runTasks` follows: drained by the look before the timers,
    /// after `runTasks` took the inbox, it would lose the wake-up of a task queued meanwhile
    /// (left alone, level-triggered, it ends the next wait at once).
    private func dispatch(_ count: Int, drainingWake: Bool) {
        for i in 0..<count {
            let fd = events[i].data.fd
            if fd == wakeFD {
                if drainingWake {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                }
                continue
            }
            if Int(fd) < handlers.count, let handler = handlers[Int(fd)] {
                handler.handleEvents(events[i].events)
            }
        }
    }

    /// Before the due timers of a turn that has lasted: what the sockets received since the
    /// turn's wait returned, handed to their handlers as the next turn would, without waiting.
    /// A timer judging a deadline ("no reply within N s", "heartbeat missed", "connect overdue")
    /// would otherwise count the loop's own hold against its peer, whose answer came in time
    /// and sits unread. Looks again while the reports fill the buffer, at most once per
    /// buffer's worth of registered descriptors, so every descriptor ready by now is seen.
    private func dispatchWhatArrivedDuringTheTurn() {
        var looks = handlers.count / Self.maxEvents + 1
        while looks > 0 {
            let count = waitForEvents(timeout: 0)
            dispatch(count, drainingWake: false)
            guard count == Self.maxEvents else { return }
            looks -= 1
        }
    }

    private func runTasks() {
        var tasks: [@Sendable () -> Void] = []
        swap(&tasks, &runningTasks)
        let stop = inbox.withLock { inbox -> Bool in
            swap(&tasks, &inbox.tasks)
            inbox.wakePending = false
            return inbox.stopRequested
        }
        for task in tasks { task() }
        tasks.removeAll(keepingCapacity: tasks.count <= 4096)
        swap(&tasks, &runningTasks)
        if stop { running = false }
    }

    /// Runs the timers due now, earliest first (ties in the order they were scheduled), however
    /// late the turn is: a loop held up past several deadlines still meets them in order.
    private func runDueTimers() {
        guard !timers.isEmpty else { return }
        var current = MonotonicClock.milliseconds()
        // Most turns have timers (the sweeps) but none due: answer those without allocating.
        guard timers.contains(where: { $0.due <= current }) else { return }
        // Time passed since the loop looked at its sockets: look again before judging. Costs a
        // system call only in a turn with a due timer (the sweeps: a few per second), and the
        // handlers it runs may cancel a due timer (an answer that ends the wait), hence `due` after.
        if current > turnStart {
            dispatchWhatArrivedDuringTheTurn()
            current = MonotonicClock.milliseconds()
        }
        let due = timers.filter { $0.due <= current }.sorted { ($0.due, $0.id) < ($1.due, $1.id) }
        for timer in due {
            // A timer that ran before it in this turn may have cancelled it.
            guard let index = timers.firstIndex(where: { $0.id == timer.id }) else { continue }
            if let interval = timer.interval {
                timers[index].due = current + interval
            } else {
                timers.remove(at: index)
            }
            timer.body()
        }
    }

    private func waitTimeout() -> Int32 {
        guard var due = timers.first?.due else { return -1 }
        for timer in timers where timer.due < due { due = timer.due }
        return Int32(clamping: max(0, due - MonotonicClock.milliseconds()))
    }
}
