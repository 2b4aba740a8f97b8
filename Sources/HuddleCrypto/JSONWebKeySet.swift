import HuddleProtocol

/// A JWKS (RFC 7517 §5): an issuer's signing keys by `kid`. Keys this verifier cannot use
/// (encryption keys, other curves, other types) are skipped rather than failing the set, as
/// identity providers publish mixed sets; a set with no usable key is refused.
public struct JSONWebKeySet: Sendable {
    public private(set) var keys: [JSONWebKey] = []

    /// A provider publishes a handful; more is a misconfigured or hostile URL.
    public static let maximumKeys = 64
    public static let maximumBytes = 256 * 1024

    public init(keys: [JSONWebKey]) { self.keys = keys }

    public init(json: [UInt8]) throws(JWTError) {
        guard json.count <= Self.maximumBytes else { throw .invalidKey("a JWKS is at most \(Self.maximumBytes) bytes") }
        let document: JSONValue
        do { document = try JSONParser.parse(json, maxDepth: 8) } catch { throw .invalidKey("the JWKS is not JSON: \(error)") }
        guard case .array(let members)? = document["keys"] else { throw .invalidKey("a JWKS is an object with a \"keys\" array") }
        guard members.count <= Self.maximumKeys else { throw .invalidKey("a JWKS holds at most \(Self.maximumKeys) keys") }
        for member in members {
            if let key = try? JSONWebKey(jwk: member) { keys.append(key) }
        }
        guard !keys.isEmpty else { throw .invalidKey("the JWKS holds no RSA or P-256 signing key") }
    }

    /// The key a token names by `kid`; a token without one may use the only key of a set of one.
    public func key(for keyID: String?) -> JSONWebKey? {
        guard let keyID else { return keys.count == 1 ? keys[0] : nil }
        return keys.first { $0.keyID == keyID }
    }

    public var keyIDs: [String] { keys.compactMap(\.keyID) }
}
