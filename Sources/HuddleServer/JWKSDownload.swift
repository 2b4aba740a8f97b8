import HuddleCrypto
import HuddleIO

/// An identity provider's JWKS fetched over http or https (HTTP/1.0, so the body is never
/// chunked), on the verifier thread that needs it; the system's CA store checks an https one.
enum JWKSDownload {
    static let timeoutMilliseconds: Int64 = 10_000

    /// Loaded once: reading the CA store costs milliseconds.
    private static let tls = Result { try TLSClientContext() }

    @Sendable static func get(_ url: String) -> Result<[UInt8], IdentitySettingsError> {
        let target: WebhookURL
        do { target = try WebhookURL(url) } catch { return .failure(IdentitySettingsError("\(url): \(error.reason)")) }
        let context: TLSClientContext?
        if target.isSecure {
            switch tls {
            case .success(let loaded): context = loaded
            case .failure(let error): return .failure(IdentitySettingsError("TLS: \(error)"))
            }
        } else {
            context = nil
        }
        let request = "GET \(target.target) HTTP/1.0\r\nHost: \(target.hostHeader)\r\nAccept: application/json\r\nUser-Agent: huddle\r\n\r\n"
        let response: [UInt8]
        do {
            response = try BlockingExchange.exchange(
                host: target.host, port: target.port, tls: context, request: Array(request.utf8), limit: JSONWebKeySet.maximumBytes + 16 * 1024,
                timeoutMilliseconds: timeoutMilliseconds)
        } catch {
            return .failure(IdentitySettingsError("\(url): \(error.reason)"))
        }
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let headEnd = response.firstRange(of: separator) else { return .failure(IdentitySettingsError("\(url): no HTTP response")) }
        let statusLine = String(decoding: response[..<headEnd.lowerBound].prefix { $0 != 13 }, as: UTF8.self)
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1] == "200" else {
            return .failure(IdentitySettingsError("\(url) answered \(statusLine.prefix(64))"))
        }
        return .success(Array(response[headEnd.upperBound...]))
    }
}
