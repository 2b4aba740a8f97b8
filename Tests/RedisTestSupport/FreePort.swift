import Foundation

/// Free loopback ports for the servers a test starts on a port it must know in advance (Redis,
/// a cluster node restarted on the port its clients know). Another process can take the port
/// between the probe and the server's bind: callers start anew on "Address already in use".
public enum FreePort {
    /// A port nothing listens on right now, from the kernel (bind to port 0, read it, close).
    public static func take() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
