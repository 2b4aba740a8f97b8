import Glibc

/// A small file read whole: a config file, a /proc file (whose size stat reports as 0, so it
/// is read until EOF rather than by its size).
public enum WholeFile {
    /// The bytes of `path`; nil when it cannot be opened or read (errno says why) or holds more
    /// than `limit` bytes (errno EFBIG).
    public static func read(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count == 0 ? bytes : nil }
            bytes += buffer[0..<count]
            guard bytes.count <= limit else {
                errno = EFBIG
                return nil
            }
        }
    }
}
