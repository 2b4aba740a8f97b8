import CHuddleShims

/// The few cryptographic primitives the server needs, from OpenSSL's libcrypto: password
/// hashing (PBKDF2-HMAC-SHA256), token hashing (SHA-256) and secure randomness.
public enum Crypto {
    /// PBKDF2-HMAC-SHA256. Deliberately slow (that is its job): call it on a worker thread,
    /// never on an I/O loop or the core.
    public static func pbkdf2SHA256(password: String, salt: [UInt8], iterations: Int, length: Int = 32) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        let passwordBytes = Array(password.utf8)
        let status = passwordBytes.withUnsafeBufferPointer { passwordBuffer in
            passwordBuffer.withMemoryRebound(to: CChar.self) { passwordChars in
                PKCS5_PBKDF2_HMAC(
                    passwordChars.baseAddress, Int32(passwordChars.count), salt, Int32(salt.count),
                    Int32(iterations), EVP_sha256(), Int32(length), &output)
            }
        }
        precondition(status == 1, "PKCS5_PBKDF2_HMAC failed")
        return output
    }

    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        _ = SHA256(bytes, bytes.count, &digest)
        return digest
    }

    /// Cryptographically secure random bytes (OpenSSL's CSPRNG).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&bytes, Int32(count)) == 1, "RAND_bytes failed")
        return bytes
    }

    /// Compares secrets in time independent of where they differ (no early exit), so a
    /// timing side channel cannot reveal how much of a guess was right.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// URL-safe base64 without padding (RFC 4648 §5): tokens travel in headers, subprotocol
    /// names and URLs, where `+`, `/` and `=` would need escaping.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int((chunk >> UInt32(shift)) & 63)]) }
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            var chunk = UInt32(bytes[index]) << 16
            if remaining == 2 { chunk |= UInt32(bytes[index + 1]) << 8 }
            output.append(alphabet[Int((chunk >> 18) & 63)])
            output.append(alphabet[Int((chunk >> 12) & 63)])
            if remaining == 2 { output.append(alphabet[Int((chunk >> 6) & 63)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
