import Foundation

/// A child's exit as the kernel reports it, instead of Foundation's `isRunning` (for the test
/// targets that start processes: a module of its own so both share one copy).
///
/// On Linux, `Process` learns of an exit only when the child's end of a socket pair is closed
/// everywhere, and that end is not close-on-exec: a process another test thread spawns at the
/// same moment can inherit it (`Process` closes the parent's descriptors by enumerating them
/// before it spawns, so one created meanwhile slips through). `isRunning` then stays true until
/// that unrelated child exits too — a server or a `--port` check that had long exited timed out
/// that way in CI. `waitid` with `WNOWAIT` asks the kernel and leaves the child for Foundation
/// to reap.
extension Process {
    /// The exit status (or the signal that ended the child), nil while it runs.
    public var exitStatusIfExited: Int32? {
        var info = siginfo_t()
        if waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT) != 0 {
            // ECHILD: Foundation reaped it already; its status is set right after the reap.
            guard errno == ECHILD else { return nil }
            while isRunning { usleep(1_000) }
            return terminationStatus
        }
        guard info._sifields._sigchld.si_pid == processIdentifier else { return nil }
        return info._sifields._sigchld.si_status
    }

    public var hasExited: Bool { exitStatusIfExited != nil }
}
