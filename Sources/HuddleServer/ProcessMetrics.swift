import Glibc
import HuddleBuildInfo
import HuddleIO

/// The process-level gauges every Prometheus client library exports (`process_*`, same names
/// and units, so stock dashboards work) and `huddle_build_info`, read from /proc at each scrape:
/// a few small reads a few times a minute, nothing kept in between.
enum ProcessMetrics {
    static func prometheusText() -> String {
        var text = ""
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        // /proc/self/stat: the fields after the command name (which may hold spaces), from field 3.
        if let stat = readSmallFile("/proc/self/stat"), let close = stat.lastIndex(of: ")") {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // utime and stime are fields 14 and 15, starttime 22, rss (pages) 24; fields[0] is field 3.
            if fields.count > 21, let user = Double(fields[11]), let system = Double(fields[12]),
               let start = Double(fields[19]), let rss = Int(fields[21]) {
                text += "# HELP process_cpu_seconds_total User and system CPU time spent, in seconds.\n# TYPE process_cpu_seconds_total counter\n"
                text += "process_cpu_seconds_total \((user + system) / ticksPerSecond)\n"
                text += "# HELP process_resident_memory_bytes Resident memory size in bytes.\n# TYPE process_resident_memory_bytes gauge\n"
                text += "process_resident_memory_bytes \(rss * pageSize)\n"
                if let bootTime = bootTimeSeconds() {
                    text += "# HELP process_start_time_seconds Start time of the process since the Unix epoch, in seconds.\n# TYPE process_start_time_seconds gauge\n"
                    text += "process_start_time_seconds \(Double(bootTime) + start / ticksPerSecond)\n"
                }
            }
        }
        if let fds = openFileDescriptors() {
            text += "# HELP process_open_fds Open file descriptors.\n# TYPE process_open_fds gauge\n"
            text += "process_open_fds \(fds)\n"
        }
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            text += "# HELP process_max_fds Most open file descriptors allowed (RLIMIT_NOFILE).\n# TYPE process_max_fds gauge\n"
            text += "process_max_fds \(limit.rlim_cur)\n"
        }
        text += "# HELP huddle_build_info The running build: always 1, its version and git commit as labels.\n# TYPE huddle_build_info gauge\n"
        text += "huddle_build_info{version=\"\(BuildInfo.version)\",commit=\"\(BuildInfo.commit)\"} 1\n"
        return text
    }

    /// `btime` of /proc/stat: the boot time that /proc/self/stat's start time counts from.
    private static func bootTimeSeconds() -> Int? {
        guard let stat = readSmallFile("/proc/stat") else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Int(line.dropFirst(6))
        }
        return nil
    }

    private static func openFileDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
        }
        // The descriptor opendir itself holds is not the server's.
        return count - 1
    }

    private static func readSmallFile(_ path: String) -> String? {
        WholeFile.read(path, limit: 1 << 20).map { String(decoding: $0, as: UTF8.self) }
    }
}
