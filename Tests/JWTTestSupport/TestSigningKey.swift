import CHuddleShims
import HuddleCrypto

/// A key pair made with libcrypto for a test, standing in for an identity provider's or an app
/// backend's signing key: it signs tokens and shows its public half as a JWK or a PEM.
public final class TestSigningKey: @unchecked Sendable {
    public enum Kind: Sendable { case rsa, p256 }

    public let kind: Kind
    public let keyID: String
    private let key: OpaquePointer

    public init(_ kind: Kind, keyID: String) {
        self.kind = kind
        self.keyID = keyID
        let context = EVP_PKEY_CTX_new_id(kind == .rsa ? EVP_PKEY_RSA : EVP_PKEY_EC, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1)
        switch kind {
        case .rsa: precondition(EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1)
        case .p256: precondition(EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, NID_X9_62_prime256v1) == 1)
        }
        var made: OpaquePointer?
        precondition(EVP_PKEY_keygen(context, &made) == 1)
        key = made!
    }

    deinit { EVP_PKEY_free(key) }

    public var algorithm: String { kind == .rsa ? "RS256" : "ES256" }

    /// The public JWK, as a JSON object's text.
    public var jwk: String {
        switch kind {
        case .rsa:
            return #"{"kty":"RSA","kid":"\#(keyID)","use":"sig","alg":"RS256","n":"\#(Crypto.base64URL(bigNumber("n")))","e":"\#(Crypto.base64URL(bigNumber("e")))"}"#
        case .p256:
            var point = [UInt8](repeating: 0, count: 65)
            var length = 0
            precondition(EVP_PKEY_get_octet_string_param(key, "pub", &point, point.count, &length) == 1 && length == 65)
            let x = Crypto.base64URL(Array(point[1..<33])), y = Crypto.base64URL(Array(point[33..<65]))
            return #"{"kty":"EC","kid":"\#(keyID)","use":"sig","alg":"ES256","crv":"P-256","x":"\#(x)","y":"\#(y)"}"#
        }
    }

    /// The public key as a PEM `PUBLIC KEY`.
    public var publicKeyPEM: String {
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        precondition(PEM_write_bio_PUBKEY(bio, key) == 1)
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = BIO_read(bio, &chunk, Int32(chunk.count))
            if count <= 0 { break }
            text += chunk[0..<Int(count)]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A compact JWS of `claims` (a JSON object's text), with this key's `kid` unless `keyID` says otherwise.
    public func sign(_ claims: String, keyID: String?? = .none, algorithm: String? = nil) -> String {
        var header = #"{"alg":"\#(algorithm ?? self.algorithm)","typ":"JWT""#
        if let named = keyID ?? self.keyID { header += #","kid":"\#(named)""# }
        header += "}"
        let input = Crypto.base64URL(Array(header.utf8)) + "." + Crypto.base64URL(Array(claims.utf8))
        return input + "." + Crypto.base64URL(signature(of: Array(input.utf8)))
    }

    /// The raw JWS signature: RSA PKCS#1 v1.5, or ECDSA's DER turned into JOSE's `r || s`.
    public func signature(of message: [UInt8]) -> [UInt8] {
        let context = EVP_MD_CTX_new()!
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1)
        var length = 0
        precondition(EVP_DigestSign(context, nil, &length, message, message.count) == 1)
        var signature = [UInt8](repeating: 0, count: length)
        precondition(EVP_DigestSign(context, &signature, &length, message, message.count) == 1)
        signature.removeSubrange(length...)
        guard kind == .p256 else { return signature }
        let parsed: OpaquePointer = signature.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)!
        }
        defer { ECDSA_SIG_free(parsed) }
        var raw = [UInt8](repeating: 0, count: 64)
        raw.withUnsafeMutableBufferPointer { buffer in
            _ = BN_bn2binpad(ECDSA_SIG_get0_r(parsed), buffer.baseAddress, 32)
            _ = BN_bn2binpad(ECDSA_SIG_get0_s(parsed), buffer.baseAddress! + 32, 32)
        }
        return raw
    }

    private func bigNumber(_ name: String) -> [UInt8] {
        var number: OpaquePointer?
        precondition(EVP_PKEY_get_bn_param(key, name, &number) == 1)
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        _ = BN_bn2bin(number, &bytes)
        return bytes
    }

    /// An HS256 token, signed with `secret`.
    public static func hs256(_ claims: String, secret: [UInt8], keyID: String? = nil) -> String {
        var header = #"{"alg":"HS256","typ":"JWT""#
        if let keyID { header += #","kid":"\#(keyID)""# }
        header += "}"
        let input = Crypto.base64URL(Array(header.utf8)) + "." + Crypto.base64URL(Array(claims.utf8))
        return input + "." + Crypto.base64URL(Crypto.hmacSHA256(key: secret, message: Array(input.utf8)))
    }

    /// A JWKS document's text holding `keys`' public halves.
    public static func jwks(_ keys: [TestSigningKey]) -> String {
        #"{"keys":[\#(keys.map(\.jwk).joined(separator: ","))]}"#
    }
}
