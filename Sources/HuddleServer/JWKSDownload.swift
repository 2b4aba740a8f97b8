import HuddleCrypto
import HuddleIO
import Synchronization

/// An identity provider's JWKS fetched over http or https (HTTP/1.0, so the body is never
/// chunked), on the verifier thread that needs it; an https one is checked against the system's
/// CA store, or the issuer's own CA file.
enum JWKSDownload {
    static let timeoutMilliseconds: Int64 = 10_000

    /// By CA file ("" for the system store), loaded once each: reading a CA store costs milliseconds.
    private static let contexts = Mutex<[String: TLSClientContext]>([:])

    @Sendable static func get(_ url: String, caFile: String?) -> Result<[UInt8], IdentitySettingsError> {
        let target: WebhookURL
        do { target = try WebhookURL(url) } catch { return .failure(IdentitySettingsError("\(url): \(error.reason)")) }
        var context: TLSClientContext?
        if target.isSecure {
            do {
                context = try contexts.withLock { contexts in
                    if let loaded = contexts[caFile ?? ""] { return loaded }
                    let loaded = try TLSClientContext(caFile: caFile)
                    contexts[caFile ?? ""] = loaded
                    return loaded
                }
            } catch {
                return .failure(IdentitySettingsError("TLS: \(error)"))
            }
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
