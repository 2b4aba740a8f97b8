import Foundation
import Synchronization

/// Starts the servers of the test process (huddle, redis-server) so that they die with it. A test that fails or times
/// out still kills its server (`ServerProcess.deinit`), but a test process that crashes, hangs
/// and is killed, or is stopped by a runner's time limit runs no deinit: its servers used to
/// live on, holding ports and data directories (35 were left after one hung run).
///
/// Each server runs under `setpriv --pdeathsig KILL`, which asks the kernel to SIGKILL it when
/// its parent goes, then execs it (same pid, so signals sent to `process` reach the server).
/// "Parent" is the thread that started the child, not the process: a thread of the
/// cooperative pool can exit while the test goes on, which would kill a live server. So every
/// start happens on one thread that never exits.
public final class ServerLauncher: @unchecked Sendable {
    public static let shared = ServerLauncher()

    private static let setpriv = "/usr/bin/setpriv"
    private let pending = Mutex<[@Sendable () -> Void]>([])
    private let wake = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                wake.wait()
                for start in pending.withLock({ jobs in defer { jobs = [] }; return jobs }) { start() }
            }
        }
        thread.name = "huddle-test-launcher"
        thread.start()
    }

    /// Sets `process` up to run `executable` with `arguments` tied to the test process (plain,
    /// where setpriv is missing), and starts it from the launcher thread.
    public func run(_ process: Process, executable: URL, arguments: [String]) async throws {
        if FileManager.default.isExecutableFile(atPath: Self.setpriv) {
            process.executableURL = URL(fileURLWithPath: Self.setpriv)
            process.arguments = ["--pdeathsig", "KILL", "--", executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        let launch = UncheckedProcess(process)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            pending.withLock {
                $0.append {
                    do {
                        try launch.process.run()
                        continuation.resume()
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            wake.signal()
        }
    }
}

/// A Process handed to the launcher thread; the caller does not touch it until `run` returns.
private struct UncheckedProcess: @unchecked Sendable {
    let process: Process
    init(_ process: Process) { self.process = process }
}
