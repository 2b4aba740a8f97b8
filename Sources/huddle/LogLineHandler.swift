import Glibc
import HuddleProtocol
import Logging

/// One log line per event on stderr, written with a single write(2) so lines from several
/// threads never interleave. `text`: `time level [source] message key=value …` — the message
/// first, where the eye looks, the details after. `json`: one JSON object per line
/// (`time`, `level`, `source`, `message`, then the metadata as string members) for log shippers.
struct LogLineHandler: LogHandler {
    enum Format: String, CaseIterable {
        case text, json
    }

    let label: String
    let format: Format
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        let fields = merged.sorted { $0.key < $1.key }.map { ($0.key, "\($0.value)") }
        let line: String
        switch format {
        case .text:
            let details = fields.map { " \($0.0)=\($0.1)" }.joined()
            line = "\(Self.timestamp()) \(event.level) \(label) [\(event.source)] \(event.message)\(details)\n"
        case .json:
            let members: [(String, JSONValue)] = [
                ("time", .string(Self.timestamp())), ("level", .string("\(event.level)")), ("source", .string(event.source)),
                ("message", .string("\(event.message)")),
            ] + fields.map { ($0.0, .string($0.1)) }
            line = JSONWriter.serialize(.object(members)) + "\n"
        }
        let bytes = Array(line.utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// ISO 8601 in UTC with milliseconds: log shippers and people on other time zones agree on it.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
        let milliseconds = Int(now.tv_nsec / 1_000_000)
        let fraction = String(milliseconds + 1000).dropFirst()
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + ".\(fraction)Z"
    }
}
