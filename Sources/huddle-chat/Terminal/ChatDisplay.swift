import Glibc

/// Where huddle-chat's output goes: one line per reply or event. The interactive display
/// keeps the line being typed intact around them; the plain one (stdin not a terminal) prints
/// lines only, so scripts and tests can read them.
protocol ChatDisplay: AnyObject {
    var isInteractive: Bool { get }
    /// A whole line of output (no newline).
    func show(_ line: String)
    /// The prompt before the input line, e.g. `alice→bob> `.
    func setPrompt(_ prompt: String)
    /// Leaves the terminal as it found it.
    func close()
}

/// Writes all of `text` to standard output, unbuffered (so lines are out before a crash or a kill).
func writeToStandardOutput(_ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { buffer in
            Glibc.write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
        }
        if written < 0 {
            if errno == EINTR { continue }
            return  // stdout is gone (a closed pipe): nothing left to tell
        }
        offset += written
    }
}

/// Non-interactive output: each line as it comes.
final class PlainDisplay: ChatDisplay {
    var isInteractive: Bool { false }

    func show(_ line: String) { writeToStandardOutput(line + "\n") }

    func setPrompt(_ prompt: String) {}

    func close() {}
}

/// Interactive output on a terminal in raw mode: a line arriving while the user types clears
/// the input line (`\r` + erase line), prints itself, and redraws the prompt and the partial
/// input with the cursor where it was — so live events never garble what is being typed.
final class TerminalDisplay: ChatDisplay {
    var isInteractive: Bool { true }
    private(set) var editor = LineEditor()
    private(set) var prompt = "> "
    private let columns: () -> Int
    private let write: (String) -> Void

    /// Erase the whole line and go to its start.
    static let clearLine = "\r\u{1B}[2K"

    init(columns: @escaping () -> Int = TerminalMode.columns, write: @escaping (String) -> Void = writeToStandardOutput) {
        self.columns = columns
        self.write = write
    }

    /// One write per line: the terminal never shows the input line half erased.
    func show(_ line: String) {
        write(Self.clearLine + line + "\n" + editor.render(prompt: prompt, columns: columns()))
    }

    func setPrompt(_ prompt: String) {
        guard prompt != self.prompt else { return }
        self.prompt = prompt
        redraw()
    }

    /// Feeds typed bytes to the editor; the input line is redrawn when it changed.
    func feed(_ bytes: [UInt8]) -> [EditorAction] {
        let actions = editor.feed(bytes)
        if !actions.isEmpty { redraw() }
        return actions
    }

    func redraw() {
        write(Self.clearLine + editor.render(prompt: prompt, columns: columns()))
    }

    func close() {
        write(Self.clearLine)
        TerminalMode.restore()
    }
}
