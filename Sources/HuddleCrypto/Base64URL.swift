extension Crypto {
    /// Decodes URL-safe base64 without padding (RFC 4648 §5, as JOSE writes it, RFC 7515 §2).
    /// Strict: padding, whitespace, the standard alphabet's `+` and `/`, an impossible length
    /// and non-zero leftover bits are all refused, so each byte string has exactly one spelling
    /// (a token cannot be altered into another that still verifies).
    public static func base64URLDecode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            guard let value = base64URLValue(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // 6 leftover bits: a length of 4n+1, which no byte string encodes to; 2 or 4 leftover
        // bits must be zero.
        guard bits < 6, accumulator == 0 else { return nil }
        return output
    }

    private static func base64URLValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
