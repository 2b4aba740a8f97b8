import HuddleCrypto

/// Password reset codes (protocol.md, "Password reset"): 8 random decimal digits, typed from a
/// mail, valid for `--password-reset-code-ttl` (15 minutes). 5 wrong tries end a code, so a guesser's chance per code is
/// 5 in 10^8. The core and the log keep only the SHA-256 of the digits.
enum PasswordResetCode {
    static let digits = 8

    static func generate() -> String {
        var code = ""
        while code.count < digits {
            // 250 = 25 × 10: bytes above it are skipped, so every digit is equally likely.
            for byte in Crypto.randomBytes(digits) where byte < 250 && code.count < digits {
                code.append(Character(Unicode.Scalar(UInt8(ascii: "0") + byte % 10)))
            }
        }
        return code
    }

    /// What the core compares: the digits as typed, without surrounding spaces.
    static func hash(_ code: String) -> [UInt8] {
        Crypto.sha256(Array(code.trimmingSpaces.utf8))
    }
}

private extension String {
    var trimmingSpaces: Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " }), let last = scalars.lastIndex(where: { $0 != " " }) else { return "" }
        return self[first...last]
    }
}
