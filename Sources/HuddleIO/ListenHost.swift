import Glibc

/// Whether a `--host` can be listened on, asked before the server touches anything, so an
/// impossible address is refused in plain words instead of after data recovery ran.
public enum ListenHost {
    /// Why `host` cannot be resolved for listening (getaddrinfo's own words), or nil when it can.
    /// Same hints as `Socket.listen`, so a host accepted here resolves there too.
    public static func problem(_ host: String) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var info: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, "0", &hints, &info)
        if status == 0 {
            freeaddrinfo(info)
            return nil
        }
        return String(cString: gai_strerror(status))
    }
}
