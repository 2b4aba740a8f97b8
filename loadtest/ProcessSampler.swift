import Glibc

/// CPU time and memory of a process from /proc: the server's (given its pid) and our own, so a
/// report shows whether the load generator or the server was the limit.
struct ProcessSample: Sendable {
    var cpuSeconds: Double
    var rssKilobytes: Int

    static func read(pid: Int32) -> ProcessSample? {
        guard let stat = ProcFile.read("/proc/\(pid)/stat"), let status = ProcFile.read("/proc/\(pid)/status") else { return nil }
        // Fields after the ")" that closes the command name: utime and stime are the 12th and 13th.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ProcessSample(cpuSeconds: (user + system) / ticks, rssKilobytes: ProcFile.field("VmRSS:", in: status) ?? 0)
    }

    /// CPU used between two samples `seconds` apart, in percent of one core.
    static func cpuPercent(from start: ProcessSample?, to end: ProcessSample?, seconds: Double) -> Double? {
        guard let start, let end, seconds > 0 else { return nil }
        return (end.cpuSeconds - start.cpuSeconds) / seconds * 100
    }
}
