/// The little DER (X.690) a JOSE verifier needs to hand keys and signatures to libcrypto in
/// the forms it reads: a SubjectPublicKeyInfo (RFC 5280) built from a JWK's numbers, and an
/// ECDSA-Sig-Value (RFC 3279) built from JOSE's raw `r || s`. Writing only, no parsing.
enum DEREncoding {
    static func sequence(_ parts: [UInt8]...) -> [UInt8] { element(0x30, parts.flatMap { $0 }) }

    /// A non-negative INTEGER from big-endian magnitude bytes: leading zeros dropped, one zero
    /// put back when the top bit is set (DER integers are signed).
    static func unsignedInteger(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.isEmpty || bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return element(0x02, bytes)
    }

    static func bitString(_ bytes: [UInt8]) -> [UInt8] { element(0x03, [0] + bytes) }

    static let null: [UInt8] = [0x05, 0x00]
    /// 1.2.840.113549.1.1.1
    static let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    /// 1.2.840.10045.2.1
    static let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    /// 1.2.840.10045.3.1.7 (P-256)
    static let prime256v1: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]

    private static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        [tag] + length(content.count) + content
    }

    private static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}
