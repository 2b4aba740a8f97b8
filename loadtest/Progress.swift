import Glibc

/// Live progress on stderr, so stdout stays clean for the summary.
final class Progress: Sendable {
    func say(_ line: String) {
        let text = "[loadtest] \(line)\n"
        _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }
}
