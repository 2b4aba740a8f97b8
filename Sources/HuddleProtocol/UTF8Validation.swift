/// Whole-buffer UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above
/// U+10FFFF) for the bytes of a JSON string.
///
/// The WebSocket layer validates text frames, but this module also parses HTTP API bodies and
/// bytes from callers that did not, so it checks for itself. The standard library's
/// `String(validating:as:)` costs about 100 ns per call even for a few ASCII bytes (it is generic
/// over the sequence); this check plus `string(fromValidUTF8:)` is several times cheaper for
/// the short strings a request is made of.
enum UTF8Validation {
    /// A `String` of bytes already known to be UTF-8, copied in one go. (The standard library
    /// still checks them, but this initializer's check is cheaper than `String(decoding:as:)`'s.)
    @inline(__always)
    static func string(fromValidUTF8 bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: bytes)
            return bytes.count
        }
    }

    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var index = 0
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index &+= 1
                // Eight ASCII bytes at a time: no high bit set in the word.
                while index &+ 8 <= count,
                    bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index &+= 8
                }
                continue
            }
            // The second byte's range depends on the lead (RFC 3629 §4, Unicode Table 3-7);
            // the third and fourth are plain continuation bytes.
            let length: Int
            var secondLow: UInt8 = 0x80
            var secondHigh: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; secondLow = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; secondHigh = 0x9F
            case 0xF0: length = 4; secondLow = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; secondHigh = 0x8F
            default: return false
            }
            guard index &+ length <= count else { return false }
            let second = bytes[index &+ 1]
            guard second >= secondLow, second <= secondHigh else { return false }
            if length > 2 {
                guard bytes[index &+ 2] & 0xC0 == 0x80 else { return false }
                if length > 3 {
                    guard bytes[index &+ 3] & 0xC0 == 0x80 else { return false }
                }
            }
            index &+= length
        }
        return true
    }
}
