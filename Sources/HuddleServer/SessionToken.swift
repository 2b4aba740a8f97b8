import HuddleCrypto

/// Session tokens: 32 random bytes, URL-safe base64 (43 characters). The server keeps only
/// their SHA-256, so a stolen snapshot or log cannot be replayed as logins.
enum SessionToken {
    static func generate() -> String { Crypto.base64URL(Crypto.randomBytes(32)) }
    static func hash(_ token: String) -> [UInt8] { Crypto.sha256(Array(token.utf8)) }
}
