import Glibc

/// Times as huddle-chat prints them: the local wall clock, `10:42` today, `2026-11-20 10:42`
/// on another day.
enum ChatClock {
    static func time(_ milliseconds: Int64, now: Int64 = nowMilliseconds()) -> String {
        guard let moment = local(milliseconds), let today = local(now) else { return "?" }
        let clock = "\(twoDigits(moment.tm_hour)):\(twoDigits(moment.tm_min))"
        if moment.tm_year == today.tm_year && moment.tm_yday == today.tm_yday { return clock }
        return "\(moment.tm_year + 1900)-\(twoDigits(moment.tm_mon + 1))-\(twoDigits(moment.tm_mday)) \(clock)"
    }

    /// Milliseconds since the Unix epoch, what the server's times count.
    static func nowMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    private static func local(_ milliseconds: Int64) -> tm? {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        return localtime_r(&seconds, &parts) == nil ? nil : parts
    }

    private static func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
