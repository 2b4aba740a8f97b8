import CHuddleShims
import Glibc

/// The TLS layer of one non-blocking connection. OpenSSL reads and writes the socket itself;
/// every call can answer "want read" or "want write", which means: wait for that readiness,
/// then retry the same call. The connection keeps `wantsWriteReadiness` in its epoll mask.
public final class TLSStream {
    private let ssl: OpaquePointer
    public private(set) var handshakeComplete = false
    /// The last call needs the socket to be writable before it can progress.
    public private(set) var wantsWriteReadiness = false

    public init(context: TLSContext, fd: Int32) throws {
        guard let ssl = SSL_new(context.context) else { throw TLSError.fromQueue("SSL_new") }
        self.ssl = ssl
        guard SSL_set_fd(ssl, fd) == 1 else { throw TLSError.fromQueue("SSL_set_fd") }
        SSL_set_accept_state(ssl)
    }

    deinit { SSL_free(ssl) }

    /// Advances the server handshake. `.bytes(0)` is never returned: `.bytes(1)` means "done".
    public func handshake() -> IOResult {
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            handshakeComplete = true
            wantsWriteReadiness = false
            return .bytes(1)
        }
        return classify(result, during: "TLS handshake")
    }

    /// Reads decrypted bytes. Callers loop until `.wouldBlock`: OpenSSL may hold decrypted bytes
    /// the socket's readiness no longer signals.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        var count = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
        if result == 1 { return .bytes(count) }
        return classify(result, during: "TLS read")
    }

    public func write(from buffer: UnsafeRawBufferPointer) -> IOResult {
        var count = 0
        let result = SSL_write_ex(ssl, buffer.baseAddress, buffer.count, &count)
        if result == 1 {
            wantsWriteReadiness = false
            return .bytes(count)
        }
        return classify(result, during: "TLS write")
    }

    /// Sends close_notify (best effort, non-blocking): the peer learns the stream ended cleanly.
    public func shutdown() {
        if handshakeComplete { _ = SSL_shutdown(ssl) }
        ERR_clear_error()
    }

    private func classify(_ result: Int32, during what: String) -> IOResult {
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ:
            wantsWriteReadiness = false
            return .wouldBlock
        case SSL_ERROR_WANT_WRITE:
            wantsWriteReadiness = true
            return .wouldBlock
        case SSL_ERROR_ZERO_RETURN:
            return .endOfStream
        case SSL_ERROR_SYSCALL:
            let error = TLSError.fromQueue(what)
            // An EOF without close_notify, or a reset: the peer is gone.
            return errno == 0 ? .endOfStream : .failed("\(error.description) (errno \(errno))")
        default:
            return .failed(TLSError.fromQueue(what).description)
        }
    }
}
