import CHuddleShims

extension Crypto {
    /// HMAC-SHA256 (RFC 2104): how the push gateway signs a webhook body, so a receiver can tell
    /// the server's requests from anyone else's without the key ever crossing the network.
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        var length: UInt32 = 0
        let result = HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &digest, &length)
        precondition(result != nil && Int(length) == digest.count, "HMAC-SHA256 failed")
        return digest
    }
}
