import CHuddleShims
import Glibc

/// A TLS client configuration: protocol floor and which certificates to trust. Loading a CA
/// store costs milliseconds and hundreds of kilobytes, so one context serves every connection
/// that trusts the same roots (OpenSSL's SSL_CTX is safe to share once configured).
///
/// Verification is on unless `insecure` is asked for: the chain must lead to a trusted root,
/// and each connection also checks the server's name or IP address (see `TLSStream`).
// Sendable: immutable once configured, and OpenSSL's SSL_CTX is thread-safe for making connections.
public final class TLSClientContext: @unchecked Sendable {
    let context: OpaquePointer
    /// Whether connections check the server's certificate and name.
    public let verifiesPeer: Bool

    /// - Parameters:
    ///   - caFile: a PEM file of certificates to trust *instead of* the system store (a private
    ///     CA, or a test one); nil trusts the system store (`/etc/ssl/certs`).
    ///   - insecure: accept any certificate and any name: only for self-signed test servers,
    ///     since anyone on the path can then read and change the traffic.
    public init(caFile: String? = nil, insecure: Bool = false) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSError.fromQueue("SSL_CTX_new") }
        self.context = context
        verifiesPeer = !insecure
        Self.brokenPipeIgnoredUnlessHandled
        // TLS 1.2 is the floor: 1.0/1.1 are deprecated (RFC 8996).
        guard huddle_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw TLSError.fromQueue("SSL_CTX_set_min_proto_version")
        }
        // The same modes as the server's context: buffers released while empty (a client may
        // hold tens of thousands of idle connections), non-blocking writes that make partial
        // progress and are retried from a queue that may have moved.
        _ = huddle_ssl_ctx_set_mode(
            context,
            Int(SSL_MODE_RELEASE_BUFFERS) | Int(SSL_MODE_ENABLE_PARTIAL_WRITE) | Int(SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)
        )
        huddle_ssl_ctx_disable_renegotiation_and_compression(context)
        if insecure {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            return
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw TLSError.fromQueue("loading CA file \(caFile)")
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw TLSError.fromQueue("loading the system CA store")
            }
        }
    }

    deinit { SSL_CTX_free(context) }

    /// OpenSSL writes to its socket with write(2), not send(MSG_NOSIGNAL), so a TLS write to a
    /// server that vanished raises SIGPIPE, whose default action kills the process. A server
    /// ignores SIGPIPE at start-up; a client library cannot assume its host did, so the first
    /// TLS client context does, unless the application installed a disposition of its own.
    private static let brokenPipeIgnoredUnlessHandled: Void = {
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0 else { return }
        if current.sa_flags & SA_SIGINFO == 0 && current.__sigaction_handler.sa_handler == nil {
            signal(SIGPIPE, SIG_IGN)
        }
    }()
}
