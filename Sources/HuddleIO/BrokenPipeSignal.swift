import Glibc

/// For libraries that write to sockets with write(2) rather than send(MSG_NOSIGNAL) (hiredis):
/// a write to a peer that vanished raises SIGPIPE, whose default action kills the process. A
/// server ignores it at start-up; a library cannot assume its host did, so it calls this first,
/// which ignores SIGPIPE unless the application installed a disposition of its own.
public enum BrokenPipeSignal {
    public static func ignoreUnlessHandled() {
        _ = ignoredOnce
    }

    private static let ignoredOnce: Void = {
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0 else { return }
        if current.sa_flags & SA_SIGINFO == 0 && current.__sigaction_handler.sa_handler == nil {
            signal(SIGPIPE, SIG_IGN)
        }
    }()
}
