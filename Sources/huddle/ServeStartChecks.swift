import ArgumentParser
import Glibc
import HuddleIO

/// The checks `huddle serve` makes of the outside world (files, the host name) while it
/// validates its flags: all before recovery or a bind, so a typo costs nothing and reads as a
/// sentence naming the flag, not as a system call's or OpenSSL's error chain.
extension Serve {
    func validateStartConditions() throws {
        if tlsPort == nil && (tlsCert != nil || tlsKey != nil) {
            throw ValidationError("--tls-cert and --tls-key need --tls-port (the port for wss://)")
        }
        if let problem = ListenHost.problem(host) {
            throw ValidationError("--host \(host) is neither an IP address nor a name this machine resolves (\(problem))")
        }
        try Self.checkReadable(tlsCert, flag: "--tls-cert")
        try Self.checkReadable(tlsKey, flag: "--tls-key")
        try Self.checkReadable(pushWebhookCa, flag: "--push-webhook-ca")
        if tlsPort != nil, let tlsCert, let tlsKey {
            do {
                _ = try TLSContext(certificateChainPath: tlsCert, privateKeyPath: tlsKey)
            } catch {
                throw ValidationError("--tls-cert \(tlsCert) is not a usable PEM certificate chain for --tls-key \(tlsKey), or they do not match (\(error))")
            }
        }
    }

    /// Opens and closes `path`: the exact reason (missing, permissions, a directory) in words.
    static func checkReadable(_ path: String?, flag: String) throws {
        guard let path else { return }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ValidationError("\(flag): cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var status = stat()
        if fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
            throw ValidationError("\(flag): \(path) is a directory, not a PEM file")
        }
    }
}
