import Glibc
import HuddleIO

/// CPU time and memory of a process from /proc: the server's (given its pid) and our own, so a
/// report shows whether the load generator or the server was the limit.
struct ProcessSample: Sendable {
    var cpuSeconds: Double
    var rssKilobytes: Int
    /// When it was read (MonotonicClock nanoseconds): CPU between two samples is divided by
    /// the time between the reads themselves, not by when a caller meant to take them.
    var takenAt: UInt64

    static func read(pid: Int32) -> ProcessSample? {
        guard let stat = ProcFile.read("/proc/\(pid)/stat"), let status = ProcFile.read("/proc/\(pid)/status") else { return nil }
        // Fields after the ")" that closes the command name: utime and stime are the 12th and 13th.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ProcessSample(
            cpuSeconds: (user + system) / ticks, rssKilobytes: ProcFile.field("VmRSS:", in: status) ?? 0,
            takenAt: MonotonicClock.nanoseconds())
    }

    /// Shortest interval a CPU percentage is given for. /proc counts CPU time in clock ticks
    /// (10 ms at the usual 100 Hz) that land in whole steps: over a few milliseconds — the
    /// last, partial second of a run — one step reads as hundreds of percent.
    static let shortestInterval = 0.2

    /// CPU used between two samples, in percent of one core, over the wall time that actually
    /// passed between the reads; nil when that is too short to mean anything. Never more than
    /// `cores` × 100 (a process cannot use more), never negative.
    static func cpuPercent(from start: ProcessSample?, to end: ProcessSample?, cores: Int) -> Double? {
        guard let start, let end, end.takenAt > start.takenAt else { return nil }
        let seconds = Double(end.takenAt - start.takenAt) / 1e9
        guard seconds >= shortestInterval else { return nil }
        let percent = (end.cpuSeconds - start.cpuSeconds) / seconds * 100
        return min(max(percent, 0), Double(max(cores, 1)) * 100)
    }
}
