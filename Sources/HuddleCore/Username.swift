/// A username in canonical form: lowercase `a-z 0-9 _`, as stored and as shown to everyone.
public typealias Username = String

/// protocol.md, `signup`: 3–32 characters from `a-z 0-9 _`, starting with a letter,
/// case-insensitive (stored lowercase).
enum UsernameRules {
    static let lengths = 3...32

    /// The canonical form of a username typed in any case, or nil when it breaks the rules.
    /// Works on bytes and folds ASCII only: Unicode case mapping would turn e.g. "K" (the
    /// Kelvin sign) into "k" and let two different inputs name one account.
    static func canonical(_ text: String) -> Username? {
        let utf8 = text.utf8
        guard lengths.contains(utf8.count) else { return nil }
        var hasUppercase = false
        for (index, byte) in utf8.enumerated() {
            let lowered = asciiLowercased(byte)
            if lowered != byte { hasUppercase = true }
            guard isAllowed(lowered, first: index == 0) else { return nil }
        }
        guard hasUppercase else { return text }
        return String(decoding: utf8.map(asciiLowercased), as: UTF8.self)
    }

    /// True when `bytes` already are a canonical username (channel names must spell users so).
    static func isCanonical<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        guard lengths.contains(bytes.count) else { return false }
        var first = true
        for byte in bytes {
            guard isAllowed(byte, first: first) else { return false }
            first = false
        }
        return true
    }

    private static func isAllowed(_ byte: UInt8, first: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): true
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): !first
        default: false
        }
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
