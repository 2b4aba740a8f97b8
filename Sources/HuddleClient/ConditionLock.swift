import Glibc

/// A value guarded by a mutex, with a condition variable to wait for it to change: how a
/// caller's thread waits for the event-loop thread in `BlockingWebSocketClient`. (The standard
/// library's `Mutex` cannot wait.)
// Sendable: `value` is read and written only with `mutex` held.
final class ConditionLock<Value>: @unchecked Sendable {
    // Heap-allocated: pthread objects must not move once initialised.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
        // Timeouts on the monotonic clock: a wall-clock jump must not cut a wait short or stretch it.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Changes the value and wakes every waiter.
    @discardableResult
    func update<Result>(_ body: (inout Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return body(&value)
    }

    /// Waits until `body`, run under the lock now and after every update, returns a result;
    /// returns nil when `seconds` pass first.
    func wait<Result>(timeout seconds: Double, until body: (inout Value) -> Result?) -> Result? {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + Int((max(seconds, 0).truncatingRemainder(dividingBy: 1)) * 1e9)
        deadline.tv_sec += Int(max(seconds, 0)) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = body(&value) { return result }
            if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT {
                return body(&value)
            }
        }
    }
}
