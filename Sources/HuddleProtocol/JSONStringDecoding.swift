/// Decoding JSON strings (RFC 8259 §7) from the parser's bytes.
///
/// Most strings on the wire have no escapes, so the scan looks eight bytes at a time for the
/// only bytes that end an unescaped run (a quote, a backslash, a control character) and builds
/// the `String` from the whole slice in one go. A string with escapes is assembled in the
/// parser's scratch buffer, copying each unescaped run in bulk.
extension JSONDocumentParser {
    /// Decodes a string whose opening quote has been consumed; leaves the cursor after the
    /// closing quote.
    mutating func parseStringBody() throws(JSONError) -> String {
        let start = index
        // The OR of every byte scanned: its high bits say whether the run was all ASCII.
        var highBits: UInt64 = 0
        while true {
            while index &+ 8 <= bytes.count {
                let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if Self.mayEndRun(word) { break }
                highBits |= word
                index &+= 8
            }
            guard index < bytes.count else {
                throw .syntax("unterminated string starting at byte \(start &- 1)")
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index &+= 1
                if highBits & 0x8080_8080_8080_8080 != 0 {
                    guard UTF8Validation.isValid(content) else {
                        throw .syntax("invalid UTF-8 in string starting at byte \(start &- 1)")
                    }
                }
                return String(decoding: content, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") {
                return try parseEscapedStringBody(from: start)
            }
            guard byte >= 0x20 else { throw controlCharacter() }
            highBits |= UInt64(byte)
            index &+= 1
        }
    }

    /// Continues a string at its first backslash, decoding into `scratch`.
    private mutating func parseEscapedStringBody(from start: Int) throws(JSONError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        while true {
            while index &+ 8 <= bytes.count,
                !Self.mayEndRun(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            {
                index &+= 8
            }
            guard index < bytes.count else {
                throw .syntax("unterminated string starting at byte \(start &- 1)")
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
                index &+= 1
                // Escapes always decode to whole, valid characters, so checking the assembled
                // bytes is the same as checking each raw run: a run's broken sequence cannot be
                // completed by an escape, whose bytes never start with a continuation byte.
                let valid = scratch.withUnsafeBytes { UTF8Validation.isValid($0) }
                guard valid else { throw .syntax("invalid UTF-8 in string starting at byte \(start &- 1)") }
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") {
                scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
                try decodeEscape()
                runStart = index
                continue
            }
            guard byte >= 0x20 else { throw controlCharacter() }
            index &+= 1
        }
    }

    /// Decodes the escape at the cursor (a backslash) into `scratch`.
    private mutating func decodeEscape() throws(JSONError) {
        let escapeStart = index
        index &+= 1
        guard index < bytes.count else { throw endOfInput("an escape") }
        let letter = bytes[index]
        index &+= 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(letter)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHexQuad()
            var scalarValue = UInt32(unit)
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed at once by an escaped low one.
                guard index &+ 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index &+ 1] == UInt8(ascii: "u")
                else { throw .syntax("unpaired surrogate escape at byte \(escapeStart)") }
                index &+= 2
                let low = try parseHexQuad()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw .syntax("unpaired surrogate escape at byte \(escapeStart)")
                }
                scalarValue = 0x10000 &+ ((UInt32(unit) &- 0xD800) << 10) &+ (UInt32(low) &- 0xDC00)
            case 0xDC00...0xDFFF:
                throw .syntax("unpaired surrogate escape at byte \(escapeStart)")
            default:
                break
            }
            appendUTF8(scalarValue)
        default:
            throw .syntax("invalid escape at byte \(escapeStart)")
        }
    }

    private mutating func parseHexQuad() throws(JSONError) -> UInt16 {
        guard index &+ 4 <= bytes.count else { throw endOfInput("four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte &- UInt8(ascii: "A") &+ 10
            default: throw unexpectedByte("where a hex digit should be")
            }
            value = value << 4 | UInt16(digit)
            index &+= 1
        }
        return value
    }

    /// Appends a scalar value (never a surrogate) as UTF-8.
    private mutating func appendUTF8(_ value: UInt32) {
        switch value {
        case ..<0x80:
            scratch.append(UInt8(value))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | value >> 6))
            scratch.append(UInt8(0x80 | value & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | value >> 12))
            scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | value & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | value >> 18))
            scratch.append(UInt8(0x80 | value >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | value & 0x3F))
        }
    }

    private func controlCharacter() -> JSONError {
        .syntax("unescaped control character 0x\(String(bytes[index], radix: 16)) in string at byte \(index)")
    }

    /// Whether `word` (eight string bytes) may hold a quote, a backslash or a control character.
    /// Exact about whether one is there, not about where: the byte loop finds it. The tests are
    /// the classic "has zero byte" / "has byte less than n" bit tricks, which never fire for
    /// bytes with the high bit set, so UTF-8 text goes through eight bytes at a time too.
    @inline(__always)
    static func mayEndRun(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let hasQuote = (quotes &- ones) & ~quotes
        let hasBackslash = (backslashes &- ones) & ~backslashes
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl) & highs != 0
    }
}
