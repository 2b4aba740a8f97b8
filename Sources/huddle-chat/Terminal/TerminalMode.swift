import Glibc

/// The terminal's raw mode, entered for the interactive client and always undone: on a normal
/// exit, and on SIGINT, SIGTERM and SIGHUP (their handlers restore the saved settings, then
/// exit as the signal would have).
enum TerminalMode {
    /// The settings before raw mode; read by the signal handlers, hence a plain global (a lock
    /// is not async-signal-safe).
    // Unsafe but safe: written once, on the main thread, before the handlers that read it exist.
    nonisolated(unsafe) private static var saved: termios?

    /// Raw input: no line buffering, no echo, Ctrl-C and Ctrl-D arrive as bytes. Output
    /// processing stays on, so "\n" still starts a new line at column 0.
    static func enterRaw() throws(TerminalError) {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { throw TerminalError("tcgetattr: \(String(cString: strerror(errno)))") }
        saved = original
        var raw = original
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        raw.c_cflag |= tcflag_t(CS8)
        // One byte is enough for read() to return, with no timeout.
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            Glibc.signal(signal) { number in
                TerminalMode.restore()
                // Leave the half-typed line as it is and let the shell speak on a fresh one.
                var newline: UInt8 = 0x0A
                _ = Glibc.write(STDOUT_FILENO, &newline, 1)
                Glibc.signal(number, SIG_DFL)
                raise(number)
            }
        }
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else { throw TerminalError("tcsetattr: \(String(cString: strerror(errno)))") }
    }

    /// Puts the terminal back as it was (async-signal-safe: one tcsetattr).
    static func restore() {
        guard var original = saved else { return }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
    }

    /// Columns of the terminal on standard output, 80 when it cannot tell.
    static func columns() -> Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}

struct TerminalError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
