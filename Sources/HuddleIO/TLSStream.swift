import CHuddleShims
import Glibc

/// The TLS layer of one non-blocking connection. OpenSSL reads and writes the socket itself;
/// every call can answer "want read" or "want write", which means: wait for that readiness,
/// then retry the same call. Which call waits for which readiness is kept per direction (a
/// read can wait for writability — a TLS 1.3 KeyUpdate to answer into a full send buffer — and
/// a write for readability): `Transport` turns that into its epoll mask and its retries.
///
/// Server side by default (`init(context:fd:)`); `init(clientContext:fd:serverName:)` makes the
/// client side of a connection we opened.
public final class TLSStream {
    private let ssl: OpaquePointer
    private let isClient: Bool
    public private(set) var handshakeComplete = false
    /// The handshake's last step waits for the socket to be writable (else readable).
    public private(set) var handshakeWaitsForWritable = false
    /// The last read answered "want write": retry it when the socket turns writable.
    public private(set) var readWaitsForWritable = false
    /// The last write answered "want read": retry it when the socket turns readable.
    public private(set) var writeWaitsForReadable = false

    public init(context: TLSContext, fd: Int32) throws {
        guard let ssl = SSL_new(context.context) else { throw TLSError.fromQueue("SSL_new") }
        self.ssl = ssl
        isClient = false
        guard SSL_set_fd(ssl, fd) == 1 else { throw TLSError.fromQueue("SSL_set_fd") }
        SSL_set_accept_state(ssl)
    }

    /// The client side, to a server known as `serverName` (a DNS name or an IP literal without
    /// brackets). A name is sent as SNI, so a server hosting several names picks the right
    /// certificate; an IP literal is not (RFC 6066 §3 forbids it). When the context verifies,
    /// the certificate must also be issued for that name or address: a valid chain alone would
    /// accept any site's certificate.
    public init(clientContext: TLSClientContext, fd: Int32, serverName: String) throws {
        guard let ssl = SSL_new(clientContext.context) else { throw TLSError.fromQueue("SSL_new") }
        self.ssl = ssl
        isClient = true
        guard SSL_set_fd(ssl, fd) == 1 else { throw TLSError.fromQueue("SSL_set_fd") }
        var scratch = in6_addr()  // room for either family's binary form
        let isIPLiteral = inet_pton(AF_INET, serverName, &scratch) == 1 || inet_pton(AF_INET6, serverName, &scratch) == 1
        if !isIPLiteral, huddle_ssl_set_tlsext_host_name(ssl, serverName) != 1 {
            throw TLSError.fromQueue("setting SNI to \(serverName)")
        }
        if clientContext.verifiesPeer {
            let expected = isIPLiteral
                ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName)
                : SSL_set1_host(ssl, serverName)
            guard expected == 1 else { throw TLSError.fromQueue("expecting a certificate for \(serverName)") }
        }
        SSL_set_connect_state(ssl)
    }

    deinit { SSL_free(ssl) }

    /// Advances the handshake. `.bytes(0)` is never returned: `.bytes(1)` means "done".
    public func handshake() -> IOResult {
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            handshakeComplete = true
            handshakeWaitsForWritable = false
            return .bytes(1)
        }
        let outcome = classify(result, during: "TLS handshake", waitsForOther: &handshakeWaitsForWritable, wantRead: false)
        // OpenSSL's queue only says "certificate verify failed"; the verify result says why
        // (expired, unknown issuer, wrong host…), which is what a client's user needs to read.
        if isClient, case .failed(let reason) = outcome {
            let verification = SSL_get_verify_result(ssl)
            if verification != X509_V_OK {
                return .failed("\(reason) (\(String(cString: X509_verify_cert_error_string(verification))))")
            }
        }
        return outcome
    }

    /// Reads decrypted bytes. Callers loop until `.wouldBlock`: OpenSSL may hold decrypted bytes
    /// the socket's readiness no longer signals.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        var count = 0
        let result = SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count)
        if result == 1 {
            readWaitsForWritable = false
            return .bytes(count)
        }
        return classify(result, during: "TLS read", waitsForOther: &readWaitsForWritable, wantRead: false)
    }

    public func write(from buffer: UnsafeRawBufferPointer) -> IOResult {
        var count = 0
        let result = SSL_write_ex(ssl, buffer.baseAddress, buffer.count, &count)
        if result == 1 {
            writeWaitsForReadable = false
            return .bytes(count)
        }
        return classify(result, during: "TLS write", waitsForOther: &writeWaitsForReadable, wantRead: true)
    }

    /// Sends close_notify (best effort, non-blocking): the peer learns the stream ended cleanly.
    public func shutdown() {
        if handshakeComplete { _ = SSL_shutdown(ssl) }
        ERR_clear_error()
    }

    /// `waitsForOther` is the call's flag for "blocked on the readiness it does not naturally
    /// wait for": writability for a read or the handshake (`wantRead` false), readability for
    /// a write (`wantRead` true).
    private func classify(_ result: Int32, during what: String, waitsForOther: inout Bool, wantRead: Bool) -> IOResult {
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ:
            waitsForOther = wantRead
            return .wouldBlock
        case SSL_ERROR_WANT_WRITE:
            waitsForOther = !wantRead
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
