import Glibc
import HuddleIO

/// A run cut short by a signal: the result covers what was measured until then.
struct Interruption: Codable, Sendable, Equatable {
    /// "SIGINT" (Ctrl-C) or "SIGTERM".
    var signal: String
    /// The phase the run was in when the signal came.
    var phase: String
    /// Seconds since the run started.
    var atSeconds: Double

    /// The shell's convention for a process ended by a signal: 128 + its number.
    var exitStatus: Int32 { 128 + (signal == "SIGTERM" ? SIGTERM : SIGINT) }
}

/// Turns SIGINT and SIGTERM into calls on a thread of ours instead of killing the process, so
/// a Ctrl-C still gets the summary and the report. The signals are blocked in the calling
/// thread — and so in every thread it starts afterwards, which inherit its mask — and a
/// dedicated thread takes them with `sigwait`: no code runs in a signal handler. The third
/// signal ends the process at once, for a run whose report will not come.
enum SignalWatcher {
    static func blockInterruptions() {
        // A shell starting the harness in the background (`&` in a script) sets both signals
        // to ignored, which would discard them before `sigwait` could take them.
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        var set = interruptions
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// `handle` gets "SIGINT" or "SIGTERM" on the watcher thread, for the first two signals.
    static func watch(_ handle: @escaping @Sendable (String) -> Void) throws {
        _ = try LoopThread.spawn(name: "loadtest-signals") {
            var set = interruptions
            var received: Int32 = 0
            var count = 0
            while sigwait(&set, &received) == 0 {
                count += 1
                if count > 2 { _exit(128 + received) }
                handle(received == SIGTERM ? "SIGTERM" : "SIGINT")
            }
        }
    }

    private static var interruptions: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }
}
