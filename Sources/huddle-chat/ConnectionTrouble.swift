/// A connection failure that retrying cannot fix — the certificate is not trusted, or the
/// scheme does not match what the port speaks — and what to do about it. A refused or dropped
/// connection (the server is down or restarting) is none of these: it is retried.
///
/// `HuddleClient` reports a failed attempt as text (OpenSSL's for TLS), so the kinds are told
/// apart by the phrases those failures always carry.
struct ConnectionTrouble: Equatable {
    let hint: String

    init?(reason: String) {
        let text = reason.lowercased()
        if Self.untrustedCertificate.contains(where: text.contains) {
            hint = "the server's certificate is not trusted: --ca FILE trusts its CA, --insecure accepts any certificate (test servers only)"
        } else if Self.plainPortUnderTLS.contains(where: text.contains) {
            hint = "the port does not speak TLS: use ws:// for it, or the server's --tls-port with wss://"
        } else if Self.tlsPortUnderPlain.contains(where: text.contains) {
            hint = "the port speaks TLS: use wss:// (with --ca FILE or --insecure for a private CA)"
        } else {
            return nil
        }
    }

    /// OpenSSL's verification failures (an unknown CA, a self-signed or expired certificate,
    /// a name that does not match).
    static let untrustedCertificate = ["certificate verify failed", "hostname mismatch", "ip address mismatch"]
    /// A TLS client hello answered in plain HTTP.
    static let plainPortUnderTLS = ["wrong version number", "packet length too long", "record layer failure"]
    /// A plain HTTP upgrade answered with TLS bytes (an alert) instead of HTTP.
    static let tlsPortUnderPlain = ["invalid http response to the upgrade"]

    /// A TLS port hangs up on a plain upgrade (a reset, or a close before any answer), as a
    /// server does that is restarting: only a run of hang-ups on ws://, from a server never
    /// reached in this run, says the scheme is wrong.
    init?(hangUpsInARow: Int, secure: Bool) {
        guard !secure, hangUpsInARow >= Self.hangUpsForWrongScheme else { return nil }
        hint = "the port hangs up on ws://, as a TLS port does: use wss:// (with --ca FILE or --insecure for a private CA)"
    }

    static func isHangUp(_ reason: String) -> Bool {
        let text = reason.lowercased()
        return ["connection reset by peer", "closed the connection during the upgrade"].contains(where: text.contains)
    }

    static let hangUpsForWrongScheme = 3
}
