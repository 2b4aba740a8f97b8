import CHuddleShims
import HuddleProtocol

/// One verification key: an RSA or P-256 public key (from a JWK or PEM) or an HMAC secret.
/// Each key verifies exactly one algorithm: RSA RS256, P-256 ES256, a secret HS256, so a token
/// cannot pick how its key is used (the classic attack: an RSA public key taken as an HS256
/// secret).
///
/// Immutable after init; libcrypto allows one `EVP_PKEY` to verify on many threads at once
/// when nobody changes it, hence `@unchecked Sendable`.
public final class JSONWebKey: @unchecked Sendable {
    public let algorithm: JWSAlgorithm
    /// The JWK's `kid`, when it had one.
    public let keyID: String?
    private let publicKey: OpaquePointer?
    private let secret: [UInt8]

    /// RSA keys shorter than this are refused (RFC 7518 §3.3 requires 2048 bits).
    public static let minimumRSABits: Int32 = 2048
    /// RFC 7518 §3.2: an HS256 key is at least as long as the hash.
    public static let minimumSecretBytes = 32

    public init(hmacSecret: [UInt8]) throws(JWTError) {
        guard hmacSecret.count >= Self.minimumSecretBytes else {
            throw .invalidKey("an HS256 secret is at least \(Self.minimumSecretBytes) bytes")
        }
        algorithm = .hs256
        keyID = nil
        publicKey = nil
        secret = hmacSecret
    }

    /// A public JWK (RFC 7517): `kty` RSA with `n` and `e`, or EC on P-256 with `x` and `y`.
    /// A JWK naming another `alg` than its type's, or meant for encryption (`use` other than
    /// `sig`), is refused; private members are ignored.
    public convenience init(jwk: JSONValue) throws(JWTError) {
        guard case .object = jwk, let type = jwk["kty"]?.stringValue else { throw .invalidKey("a JWK is an object with \"kty\"") }
        if let use = jwk["use"], use.stringValue != "sig" { throw .invalidKey("the JWK is not for signatures") }
        let keyID = jwk["kid"]?.stringValue
        let spki: [UInt8]
        let algorithm: JWSAlgorithm
        switch type {
        case "RSA":
            guard let n = jwk["n"]?.stringValue.flatMap(Crypto.base64URLDecode), let e = jwk["e"]?.stringValue.flatMap(Crypto.base64URLDecode),
                !n.isEmpty, !e.isEmpty
            else { throw .invalidKey("an RSA JWK has base64url \"n\" and \"e\"") }
            algorithm = .rs256
            let rsaKey = DEREncoding.sequence(DEREncoding.unsignedInteger(n), DEREncoding.unsignedInteger(e))
            spki = DEREncoding.sequence(DEREncoding.sequence(DEREncoding.rsaEncryption, DEREncoding.null), DEREncoding.bitString(rsaKey))
        case "EC":
            guard jwk["crv"]?.stringValue == "P-256" else { throw .invalidKey("only the P-256 curve is supported") }
            guard let x = jwk["x"]?.stringValue.flatMap(Crypto.base64URLDecode), let y = jwk["y"]?.stringValue.flatMap(Crypto.base64URLDecode),
                x.count == 32, y.count == 32
            else { throw .invalidKey("a P-256 JWK has 32-byte base64url \"x\" and \"y\"") }
            algorithm = .es256
            spki = DEREncoding.sequence(
                DEREncoding.sequence(DEREncoding.ecPublicKey, DEREncoding.prime256v1), DEREncoding.bitString([0x04] + x + y))
        default:
            throw .invalidKey("unsupported key type \"\(type)\"")
        }
        if let named = jwk["alg"]?.stringValue, named != algorithm.rawValue {
            throw .invalidKey("a \(type) key cannot be used for \(named)")
        }
        try self.init(subjectPublicKeyInfo: spki, keyID: keyID)
    }

    /// A PEM `PUBLIC KEY` (SubjectPublicKeyInfo), RSA or P-256.
    public convenience init(pem: String) throws(JWTError) {
        let bytes = Array(pem.utf8)
        // The BIO reads the PEM text in place; it does not outlive this call.
        let key: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let key else {
            ERR_clear_error()
            throw .invalidKey("not a PEM public key")
        }
        try self.init(adopting: key, keyID: nil)
    }

    private convenience init(subjectPublicKeyInfo der: [UInt8], keyID: String?) throws(JWTError) {
        // d2i_PUBKEY advances its own copy of the pointer; the buffer outlives the call only.
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else {
            ERR_clear_error()
            throw .invalidKey("libcrypto refused the key (an EC point not on the curve, or a malformed number)")
        }
        try self.init(adopting: key, keyID: keyID)
    }

    /// Takes ownership of `key` (freed here on refusal, else on deinit).
    private init(adopting key: OpaquePointer, keyID: String?) throws(JWTError) {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            guard EVP_PKEY_get_bits(key) >= Self.minimumRSABits else {
                EVP_PKEY_free(key)
                throw .invalidKey("an RSA key is at least \(Self.minimumRSABits) bits")
            }
            algorithm = .rs256
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 32)
            guard EVP_PKEY_get_group_name(key, &name, name.count, nil) == 1,
                String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
            else {
                EVP_PKEY_free(key)
                throw .invalidKey("only the P-256 curve is supported")
            }
            algorithm = .es256
        default:
            EVP_PKEY_free(key)
            throw .invalidKey("only RSA and P-256 public keys are supported")
        }
        self.keyID = keyID
        publicKey = key
        secret = []
    }

    deinit { if let publicKey { EVP_PKEY_free(publicKey) } }

    /// Whether `signature` is this key's signature of `signingInput` under `algorithm`.
    func verifies(_ signature: [UInt8], of signingInput: [UInt8], as algorithm: JWSAlgorithm) throws(JWTError) -> Bool {
        guard algorithm == self.algorithm else {
            throw .algorithmMismatch(algorithm: algorithm.rawValue, key: self.algorithm.keyDescription)
        }
        switch algorithm {
        case .hs256:
            return Crypto.constantTimeEquals(Crypto.hmacSHA256(key: secret, message: signingInput), signature)
        case .rs256:
            guard let publicKey, signature.count == Int(EVP_PKEY_get_size(publicKey)) else { return false }
            return Self.digestVerify(publicKey, signature, signingInput)
        case .es256:
            // JOSE signs ES256 as the raw 32-byte r and s (RFC 7518 §3.4); libcrypto reads DER.
            guard let publicKey, signature.count == 64 else { return false }
            let der = DEREncoding.sequence(
                DEREncoding.unsignedInteger(Array(signature[0..<32])), DEREncoding.unsignedInteger(Array(signature[32..<64])))
            return Self.digestVerify(publicKey, der, signingInput)
        }
    }

    private static func digestVerify(_ key: OpaquePointer, _ signature: [UInt8], _ message: [UInt8]) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let verified = EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
        // A failed verification leaves errors on the thread's queue; they are not this thread's next problem.
        if !verified { ERR_clear_error() }
        return verified
    }
}

extension JWSAlgorithm {
    var keyDescription: String {
        switch self {
        case .rs256: "an RSA key, RS256"
        case .es256: "a P-256 key, ES256"
        case .hs256: "an HS256 secret"
        }
    }
}
