import Glibc
import HuddleClient
import HuddleProtocol
import HuddleIO

/// What the harness can know of the server it measured, and nothing it cannot: the URL it was
/// given; with `--server-pid`, the command line the server was started with (its flags, from
/// /proc, as the kernel holds them); and the `…_info` lines of the server's /metrics (build or
/// configuration info, Prometheus style), when the server publishes any and the harness can
/// read them (plain `ws://` only). What could not be read says why, instead of being guessed.
struct ServerInfo: Codable, Sendable, Equatable {
    var url: String
    var commandLine: String?
    var metricsInfo: [String]
    /// Why `metricsInfo` is empty, when it is.
    var metricsNote: String?

    static func gather(url: ClientURL, pid: Int32?) -> ServerInfo {
        let command = pid.flatMap(commandLine(ofProcess:))
        guard !url.isSecure else {
            return ServerInfo(url: url.description, commandLine: command, metricsInfo: [], metricsNote: "/metrics not read over TLS")
        }
        switch MetricsReader.get(host: url.host, port: url.port) {
        case .success(let body):
            let lines = infoLines(body)
            return ServerInfo(
                url: url.description, commandLine: command, metricsInfo: lines,
                metricsNote: lines.isEmpty ? "/metrics has no …_info metric" : nil)
        case .failure(let failure):
            return ServerInfo(url: url.description, commandLine: command, metricsInfo: [], metricsNote: "/metrics: \(failure.description)")
        }
    }

    /// Samples of info metrics (`name_info{labels} 1`): the convention for build and
    /// configuration facts. At most 50, so a strange server cannot fill the report.
    static func infoLines(_ metrics: String) -> [String] {
        let lines = metrics.split(separator: "\n").filter { line in
            guard !line.hasPrefix("#") else { return false }
            let name = line.prefix { $0 != "{" && $0 != " " }
            return name.hasSuffix("_info")
        }
        return lines.prefix(50).map(String.init)
    }

    /// /proc/PID/cmdline: the arguments, NUL-separated, quoted back for the shell.
    static func commandLine(ofProcess pid: Int32) -> String? {
        guard let text = ProcFile.read("/proc/\(pid)/cmdline"), !text.isEmpty else { return nil }
        return text.split(separator: "\0", omittingEmptySubsequences: false).dropLast(text.hasSuffix("\0") ? 1 : 0)
            .map { Measurement.shellQuoted(String($0)) }.joined(separator: " ")
    }
}

/// One blocking `GET /metrics` over plain HTTP/1.1, on the main thread after the run: a few
/// lines of poll and read rather than a dependency, bounded in time (2 s) and size (4 MiB).
enum MetricsReader {
    static func get(host: String, port: Int) -> Result<String, SetupFailure> {
        let fd: Int32
        do {
            fd = try Socket.connect(host: host, port: port)
        } catch {
            return .failure(SetupFailure("cannot connect: \(error)"))
        }
        defer { close(fd) }
        guard wait(fd, for: Int16(POLLOUT)), Socket.connectionError(fd) == 0 else { return .failure(SetupFailure("cannot connect")) }
        let request = "GET /metrics HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\nConnection: close\r\n\r\n"
        let sent = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        guard sent == request.utf8.count else { return .failure(SetupFailure("cannot send the request")) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while response.count < 4 << 20, wait(fd, for: Int16(POLLIN)) {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            response.append(contentsOf: buffer[0..<count])
        }
        let text = String(decoding: response, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200") || text.hasPrefix("HTTP/1.0 200") else {
            return .failure(SetupFailure(text.isEmpty ? "no answer" : String(text.prefix { $0 != "\r" && $0 != "\n" })))
        }
        guard let bodyStart = text.range(of: "\r\n\r\n") else { return .failure(SetupFailure("no body")) }
        return .success(String(text[bodyStart.upperBound...]))
    }

    private static func wait(_ fd: Int32, for events: Int16) -> Bool {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        return poll(&entry, 1, 2_000) == 1
    }
}
