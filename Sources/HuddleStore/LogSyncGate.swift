import Glibc
import Synchronization

/// A test hook: holds the background syncs of the log (`LogSync.perform`) on a test's command,
/// so a test can watch what the server does while a batch is not yet durable, without timing
/// anything. The commands are bytes written to a FIFO: `h` holds every sync from then on, `s`
/// lets one held (or the next) sync through, `o` opens the gate again. It starts open.
/// `onHold` is told each sequence the moment its sync starts waiting.
///
/// Installed only when the server is started with `HUDDLE_TEST_SYNC_GATE` naming the FIFO.
public final class LogSyncGate: Sendable {
    private struct State {
        var holding = false
        var steps = 0
    }

    private static let slot = Mutex<LogSyncGate?>(nil)
    private let fd: Int32
    private let state = Mutex(State())
    private let onHold: @Sendable (UInt64) -> Void

    /// The gate every `LogSync` passes, if one was installed.
    static var installed: LogSyncGate? { slot.withLock { $0 } }

    /// Opens the FIFO at `path` (read-write, so that opening does not wait for a writer and a
    /// closed writer is no end of file) and installs the gate for the whole process.
    public static func install(fifo path: String, onHold: @escaping @Sendable (UInt64) -> Void) throws {
        let fd = try FileIO.open(path, O_RDWR | O_NONBLOCK)
        slot.withLock { $0 = LogSyncGate(fd: fd, onHold: onHold) }
    }

    private init(fd: Int32, onHold: @escaping @Sendable (UInt64) -> Void) {
        self.fd = fd
        self.onHold = onHold
    }

    /// Returns once the gate lets the sync of `sequence` through.
    func pass(sequence: UInt64) {
        var announced = false
        while true {
            takeCommands()
            let through = state.withLock { state -> Bool in
                guard state.holding else { return true }
                guard state.steps > 0 else { return false }
                state.steps -= 1
                return true
            }
            if through { return }
            if !announced {
                announced = true
                onHold(sequence)
            }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&waiting, 1, -1)
        }
    }

    private func takeCommands() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            state.withLock { state in
                for command in buffer[0..<count] {
                    switch command {
                    case UInt8(ascii: "h"): state.holding = true
                    case UInt8(ascii: "s"): state.steps += 1
                    case UInt8(ascii: "o"): state = State()
                    default: break
                    }
                }
            }
        }
    }
}
