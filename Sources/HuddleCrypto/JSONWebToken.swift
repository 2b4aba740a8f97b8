import HuddleProtocol

/// A JWS in compact serialization (RFC 7515 §7.1) carrying JWT claims (RFC 7519), split and
/// decoded but not yet trusted: `verify(with:)` checks the signature; what the claims must say
/// is the caller's business (`JWTClaims`).
public struct JSONWebToken: Sendable {
    public let algorithm: JWSAlgorithm
    public let keyID: String?
    /// The payload, a JSON object.
    public let claims: JSONValue
    private let signingInput: [UInt8]
    private let signature: [UInt8]

    public init(compact token: String, maximumBytes: Int) throws(JWTError) {
        guard token.utf8.count <= maximumBytes else { throw .oversized(limit: maximumBytes) }
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("a token has three dot-separated parts") }
        guard let headerBytes = Crypto.base64URLDecode(Substring(parts[0])),
            let payloadBytes = Crypto.base64URLDecode(Substring(parts[1])),
            let signature = Crypto.base64URLDecode(Substring(parts[2]))
        else { throw .malformed("a part is not base64url") }
        let header = try Self.object(headerBytes, "header")
        guard let name = header["alg"]?.stringValue else { throw .malformed("the header has no \"alg\"") }
        guard let algorithm = JWSAlgorithm(rawValue: name) else { throw .unsupportedAlgorithm(name) }
        // RFC 7515 §4.1.11: an extension this verifier does not know must not be ignored.
        guard header["crit"] == nil else { throw .malformed("the header has \"crit\" extensions") }
        if let keyID = header["kid"], keyID.stringValue == nil { throw .malformed("\"kid\" is not a string") }
        self.algorithm = algorithm
        keyID = header["kid"]?.stringValue
        claims = try Self.object(payloadBytes, "payload")
        signingInput = Array(token.utf8[..<parts[1].endIndex])
        self.signature = signature
    }

    /// Throws unless `key` signed this token with the algorithm the header names (which must be
    /// the key's own).
    public func verify(with key: JSONWebKey) throws(JWTError) {
        guard try key.verifies(signature, of: signingInput, as: algorithm) else { throw .badSignature }
    }

    private static func object(_ bytes: [UInt8], _ part: String) throws(JWTError) -> JSONValue {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes, maxDepth: 16) } catch { throw .malformed("the \(part) is not JSON") }
        guard case .object = value else { throw .malformed("the \(part) is not a JSON object") }
        return value
    }
}
