import CHuddleShims
import Glibc

/// A plain POSIX thread running one closure: each I/O loop gets its own, and nothing else runs
/// on it (no executor, no task hops).
// Sendable: every property is set before the thread starts and only read afterwards.
public final class LoopThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let name: String
    private let body: @Sendable () -> Void

    private init(name: String, body: @escaping @Sendable () -> Void) {
        // Thread names show in top and perf; Linux caps them at 15 bytes.
        self.name = String(name.utf8.prefix(15))!
        self.body = body
    }

    public static func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws -> LoopThread {
        let handle = LoopThread(name: name, body: body)
        let unmanaged = Unmanaged.passRetained(handle)
        let status = pthread_create(&handle.thread, nil, { argument in
            let handle = Unmanaged<LoopThread>.fromOpaque(argument!).takeRetainedValue()
            huddle_set_current_thread_name(handle.name)
            handle.body()
            return nil
        }, unmanaged.toOpaque())
        guard status == 0 else {
            unmanaged.release()
            throw SystemError("pthread_create", errno: status)
        }
        return handle
    }

    public func join() {
        pthread_join(thread, nil)
    }
}
