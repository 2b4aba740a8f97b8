import CHuddleShims

/// SHA-256 over bytes that arrive in pieces (a photo hashed while it streams to disk), through
/// OpenSSL's EVP interface. Owned by one thread at a time.
public final class SHA256Digest {
    private let context: OpaquePointer

    public init() {
        // Allocation failure is the only way these fail for SHA-256.
        context = EVP_MD_CTX_new()!
        precondition(EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1, "EVP_DigestInit_ex failed")
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(EVP_DigestUpdate(context, base, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    /// The digest of everything given; the object is spent afterwards.
    public func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        var length: UInt32 = 0
        precondition(EVP_DigestFinal_ex(context, &digest, &length) == 1 && Int(length) == digest.count, "EVP_DigestFinal_ex failed")
        return digest
    }
}
