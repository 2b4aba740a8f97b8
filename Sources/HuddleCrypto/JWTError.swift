/// Why a JWS/JWT or a key was refused. Each case is one precise reason, for the reply and the
/// log line (which never hold the token itself).
public enum JWTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Longer than the limit the caller set.
    case oversized(limit: Int)
    /// Not three base64url parts, bad base64url, or a header or payload that is not a JSON object.
    case malformed(String)
    /// `alg` is not one this verifier accepts (`none` among them).
    case unsupportedAlgorithm(String)
    /// The header names an algorithm the key is not for (an RSA key offered as an HMAC secret).
    case algorithmMismatch(algorithm: String, key: String)
    case badSignature
    /// A key (JWK, JWKS, PEM, secret) that cannot be used.
    case invalidKey(String)

    public var description: String {
        switch self {
        case .oversized(let limit): "the token is longer than \(limit) bytes"
        case .malformed(let why): "malformed token: \(why)"
        case .unsupportedAlgorithm(let algorithm): "unsupported algorithm \"\(algorithm.prefix(32))\""
        case .algorithmMismatch(let algorithm, let key): "the token's algorithm \(algorithm) does not match the key (\(key))"
        case .badSignature: "the signature does not verify"
        case .invalidKey(let why): "invalid key: \(why)"
        }
    }
}
