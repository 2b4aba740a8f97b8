import Glibc

/// Live progress on stderr, so stdout stays clean for the summary.
final class Progress: Sendable {
    /// Says nothing: for tests that drive a measurement by hand.
    let isQuiet: Bool

    init(quiet: Bool = false) { isQuiet = quiet }

    func say(_ line: String) {
        guard !isQuiet else { return }
        let text = "[loadtest] \(line)\n"
        _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }
}
