import CHuddleShims

/// The server's TLS configuration: certificate, key and protocol floor, shared by every
/// connection of every loop (OpenSSL's SSL_CTX is safe to share once configured).
// Sendable: immutable once configured, and OpenSSL's SSL_CTX is thread-safe for making connections.
public final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer

    public init(certificateChainPath: String, privateKeyPath: String) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError.fromQueue("SSL_CTX_new") }
        self.context = context
        // TLS 1.2 is the floor: 1.0/1.1 are deprecated (RFC 8996).
        guard huddle_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw TLSError.fromQueue("SSL_CTX_set_min_proto_version")
        }
        // RELEASE_BUFFERS frees OpenSSL's 16 KiB+ read/write buffers whenever they are empty,
        // which is most of the life of an idle connection. PARTIAL_WRITE and MOVING_WRITE_BUFFER
        // let a non-blocking write make progress and be retried from a buffer that moved.
        _ = huddle_ssl_ctx_set_mode(
            context,
            Int(SSL_MODE_RELEASE_BUFFERS) | Int(SSL_MODE_ENABLE_PARTIAL_WRITE) | Int(SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)
        )
        // Renegotiation is a DoS lever and a source of WANT_READ on writes; nobody needs it.
        huddle_ssl_ctx_disable_renegotiation_and_compression(context)
        guard SSL_CTX_use_certificate_chain_file(context, certificateChainPath) == 1 else {
            throw TLSError.fromQueue("loading certificate \(certificateChainPath)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, privateKeyPath, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError.fromQueue("loading private key \(privateKeyPath)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError.fromQueue("certificate and private key do not match")
        }
    }

    deinit { SSL_CTX_free(context) }
}

/// A TLS failure with OpenSSL's own explanation.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    public var description: String

    /// Drains OpenSSL's thread-local error queue into one message (and leaves it empty, so a
    /// stale error cannot be blamed on the next connection served by this thread).
    static func fromQueue(_ what: String) -> TLSError {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            reasons.append(text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        return TLSError(description: reasons.isEmpty ? what : "\(what): \(reasons.joined(separator: "; "))")
    }
}
