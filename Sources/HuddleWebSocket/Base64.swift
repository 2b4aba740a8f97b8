/// Standard base64 with padding (RFC 4648 §4), the alphabet of `Sec-WebSocket-Key` and
/// `Sec-WebSocket-Accept`. Foundation would do, but this module keeps Foundation off its paths.
public enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        let length = (bytes.count + 2) / 3 * 4
        return String(unsafeUninitializedCapacity: length) { output in
            var out = 0
            var iterator = bytes.makeIterator()
            while let first = iterator.next() {
                let second = iterator.next()
                let third = iterator.next()
                let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
                output[out] = alphabet[Int(group >> 18 & 0x3F)]
                output[out + 1] = alphabet[Int(group >> 12 & 0x3F)]
                output[out + 2] = second == nil ? UInt8(ascii: "=") : alphabet[Int(group >> 6 & 0x3F)]
                output[out + 3] = third == nil ? UInt8(ascii: "=") : alphabet[Int(group & 0x3F)]
                out += 4
            }
            return out
        }
    }

    /// The decoded bytes, or nil unless the text is canonical-length padded base64: a length that
    /// is a multiple of 4, `=` only as the last one or two characters, nothing outside the
    /// alphabet (no whitespace, no URL-safe variant). Unused low bits of the last character are
    /// ignored, as RFC 4648 §3.5 permits.
    public static func decode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLastGroup = index + 4 == input.count
            let padding = isLastGroup ? (input[index + 3] == UInt8(ascii: "=") ? (input[index + 2] == UInt8(ascii: "=") ? 2 : 1) : 0) : 0
            var group: UInt32 = 0
            for offset in 0..<(4 - padding) {
                guard let value = sextet(input[index + offset]) else { return nil }
                group = group << 6 | UInt32(value)
            }
            group <<= 6 * UInt32(padding)
            output.append(UInt8(truncatingIfNeeded: group >> 16))
            if padding < 2 { output.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if padding < 1 { output.append(UInt8(truncatingIfNeeded: group)) }
            index += 4
        }
        return output
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
