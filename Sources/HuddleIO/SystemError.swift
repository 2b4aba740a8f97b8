import Glibc

/// A failed system call: which call, and errno at the time.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public var call: String
    public var errno: Int32

    public init(_ call: String, errno: Int32 = Glibc.errno) {
        self.call = call
        self.errno = errno
    }

    /// A call that does not set errno (getaddrinfo) carries its own reason in `call`, and
    /// errno 0 would only add a misleading "Success".
    public var description: String {
        errno == 0 ? call : "\(call): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
