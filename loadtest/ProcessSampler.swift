import Glibc

/// CPU time and memory of a process from /proc: the server's (given its pid) and our own, so a
/// report shows whether the load generator or the server was the limit.
struct ProcessSample: Sendable {
    var cpuSeconds: Double
    var rssKilobytes: Int

    static func read(pid: Int32) -> ProcessSample? {
        guard let stat = readFile("/proc/\(pid)/stat"), let status = readFile("/proc/\(pid)/status") else { return nil }
        // Fields after the ")" that closes the command name: utime and stime are the 12th and 13th.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var rss = 0
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            rss = Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return ProcessSample(cpuSeconds: (user + system) / ticks, rssKilobytes: rss)
    }

    private static func readFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
