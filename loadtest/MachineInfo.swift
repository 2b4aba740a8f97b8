import Glibc

/// The machine a run was measured on, written next to every result: figures mean little
/// without the cores, memory and load they were taken with.
struct MachineInfo: Codable, Sendable, Equatable {
    var processors: Int
    var memoryKilobytes: Int
    var cpuModel: String
    var kernel: String
    /// One-, five- and fifteen-minute load averages when the run started and ended.
    var loadAtStart: [Double]
    var loadAtEnd: [Double]
    /// `ulimit -n` of the harness (after raising the soft limit to the hard one) and, when
    /// its pid is known, of the server: both bound how many connections a run can hold.
    var openFilesLimit: Int
    var serverOpenFilesLimit: Int?

    static func current(serverPID: Int32?) -> MachineInfo {
        let cpuinfo = ProcFile.read("/proc/cpuinfo") ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingSpaces } ?? "unknown"
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let system = withUnsafeBytes(of: &name.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let machine = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return MachineInfo(
            processors: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            memoryKilobytes: ProcFile.field("MemTotal:", in: ProcFile.read("/proc/meminfo") ?? "") ?? 0,
            cpuModel: model, kernel: "\(system) \(release) \(machine)",
            loadAtStart: loadAverages() ?? [], loadAtEnd: [],
            openFilesLimit: Int(limit.rlim_cur),
            serverOpenFilesLimit: serverPID.flatMap(openFilesLimit(ofProcess:)))
    }

    /// `/proc/loadavg`'s first three numbers.
    static func loadAverages() -> [Double]? {
        guard let text = ProcFile.read("/proc/loadavg") else { return nil }
        let numbers = text.split(separator: " ").prefix(3).compactMap { Double($0) }
        return numbers.count == 3 ? numbers : nil
    }

    /// Raises this process's soft limit on open files to its hard limit: each connection is a
    /// descriptor, and the usual soft limit (1024) would cap a run long before the machine does.
    static func raiseOpenFilesLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The soft "Max open files" of another process, from /proc/PID/limits.
    static func openFilesLimit(ofProcess pid: Int32) -> Int? {
        guard let text = ProcFile.read("/proc/\(pid)/limits") else { return nil }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else { return nil }
        return line.dropFirst("Max open files".count).split(separator: " ").first.flatMap { Int($0) }
    }

    var summary: String {
        let gib = Double(memoryKilobytes) / 1_048_576
        let load = { (values: [Double]) in values.map { formatted($0, decimals: 2) }.joined(separator: " ") }
        return "\(processors) CPUs (\(cpuModel)), \(formatted(gib, decimals: 1)) GiB, \(kernel); load \(load(loadAtStart)) → \(load(loadAtEnd)); ulimit -n \(openFilesLimit)"
            + (serverOpenFilesLimit.map { " (server \($0))" } ?? "")
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
